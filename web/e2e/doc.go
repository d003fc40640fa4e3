// Package e2e holds the end-to-end tests of the workbench: e2e_test.go
// builds leakscope, records a real capture of a leaky sample service,
// starts `leakscope serve` on a free loopback port with an empty data
// directory and runs workbench.test.mjs (node --test, playwright-core
// driving Debian's headless /usr/bin/chromium) against it. Screenshots of
// every view are written to web/e2e/screenshots/.
//
// Run: go test ./web/e2e/ (skipped with -short, or when node or chromium
// is missing; npm ci is run here when node_modules is absent).
package e2e
