// Package e2e holds the end-to-end tests of the workbench: each test
// builds leakscope, starts `leakscope serve` on a free loopback port with
// an empty data directory, uploads captures and runs a node --test file
// (playwright-core driving Debian's headless /usr/bin/chromium) against
// it. TestWorkbench (workbench.test.mjs) records a live capture and works
// every view's controls; TestViews (views.test.mjs, history.test.mjs)
// reads every view as a person reads it — text, badges, the drawn charts —
// for the demo's capture, an agent capture with history, a single dump
// and a capture opened cold, and compares what it reads with the API's
// JSON; TestFleetView (fleet.test.mjs) the fleet across nodes;
// TestFleetBuilds (builds.test.mjs) the fleet across two builds of one
// service, built from a git repository of its own, one leaking.
// trigger.test.mjs is run by deploy's TestAlertToPostmortem: the alert
// that started an agent's capture, in the overview and the fleet.
// Screenshots of the views are written to web/e2e/screenshots/.
//
// Run: go test ./web/e2e/ (skipped with -short, or when node or chromium
// is missing; npm ci is run here when node_modules is absent).
package e2e
