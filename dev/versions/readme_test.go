package versions

import (
	"fmt"
	"strings"
)

// The version table of docs/CAPTURE.md lies between these lines.
const (
	tableBegin = "<!-- version table: written by `go test ./dev/versions -run TestMatrix -update-readme` from what it verified -->\n"
	tableEnd   = "<!-- end of version table -->"
)

// versionTable renders the version table: one row per toolchain, one
// column per source; a cell is ✓ when the source passed its checks in all
// three build modes.
func versionTable(res *matrixResults) string {
	var b strings.Builder
	b.WriteString("| Go | pprof | goroutine dump | execution trace | eBPF | goroutineleak | report names leak and creator |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, tc := range Toolchains {
		fmt.Fprintf(&b, "| %s |", tc)
		for _, src := range matrixSources {
			fmt.Fprintf(&b, " %s |", cell(res, tc, src))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// cell says what the matrix verified of src with toolchain tc.
func cell(res *matrixResults, tc, src string) string {
	res.mu.Lock()
	all := true
	for _, m := range Modes {
		all = all && res.passed[tc+"/"+string(m)][src]
	}
	res.mu.Unlock()
	if !all {
		return "✗"
	}
	switch src {
	case "trace":
		return fmt.Sprintf("✓ (format go 1.%d)", formatOf(tc))
	case "goroutineleak":
		switch exp, served := LeakProfileExperiment(tc); {
		case !served:
			return "not in this runtime (skipped with a note)"
		case exp != "":
			return "✓ with GOEXPERIMENT=" + exp
		}
	}
	return "✓"
}
