// Package bundles holds small capture bundles recorded from the sample
// programs, so that `leakscope serve` has something to show with no
// capture at all; it lives beside the command that embeds it, and tests
// across the module read the same bundles. `go generate` (make generate)
// records them again from the programs in samples/.
package bundles

import "embed"

//go:generate go run gen.go

// FS holds the sample bundles, one NAME.lsb directory each.
//
//go:embed *.lsb
var FS embed.FS
