// Package corpus measures leakscope on the blocking-bug corpus in
// samples/blocking: it builds every program with a small pprof hook,
// runs them all side by side until each bug has triggered (observed in the
// program's own goroutine dumps), records each input form an on-call
// engineer would have — one SIGQUIT traceback, `go test -timeout` output,
// one dump, two dumps a second apart, a dump after the goroutines have
// waited a minute, the runtime's goroutineleak profile alone and beside
// two dumps — ingests each form into its own bundle, with the program's
// source and again with it moved away, analyses it and scores the report
// against the program's truth.json (the bug named first, with the right
// pattern; no suspect on a control).
//
// The table it prints is the one in docs/ACCURACY.md (make accuracy), and the
// test in this package fails when a run falls below that page's claim.
package corpus
