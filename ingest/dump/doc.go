// Package dump reads Go goroutine dumps and crash tracebacks and ingests
// them into a leakscope bundle.
//
// Two kinds of input share one text format:
//
//   - the output of /debug/pprof/goroutine?debug=2 (runtime.Stack with
//     all=true), which the runtime caps at 64 MiB, cutting the last
//     goroutine off mid-line;
//   - a crash traceback as written to stderr by a panic, a fatal error or
//     SIGQUIT (with GOTRACEBACK=all, system or crash), usually found in a
//     pod's log, preceded by a preamble ("panic: ...", "SIGQUIT: quit",
//     "PC=0x... m=0 sigcode=0") and followed by a register dump.
//
// Formats of Go 1.18 through 1.26 are understood: "created by f" (before
// 1.21) and "created by f in goroutine N" (1.21+), "...additional frames
// elided..." (before 1.21) and "...N frames elided..." (1.21+), headers with
// "gp=0x... m=N mp=0x..." and frames with "fp= sp= pc=" (tracebacks at
// level system or crash), and the header extras "N minutes", "locked to
// thread", "synctest bubble N", "(durable)", "(leaked)", "(scan)" and
// "labels:{...}" (Go 1.26 with GODEBUG=tracebacklabels=1).
//
// # What is skipped and what is an error
//
// A goroutine block starts at a header line ("goroutine 18 [chan send]:")
// and ends at a blank line, at the next header, at an "exit status N" line
// (go run), or, once its "created by" frame is complete, at any other line.
// Lines between blocks are skipped without complaint: crash tracebacks come
// from logs, where other output surrounds them (the preamble, the register
// dump, log lines of other programs). Inside a block every line must belong
// to the format; anything else is a [*SyntaxError] naming the line number,
// its content and the goroutine. Input with no goroutine block at all is an
// error wrapping [ErrNoGoroutines].
//
// # Truncated input
//
// The reader recognises a dump cut off inside a goroutine block: at the end
// of input without a final newline, inside an unfinished frame, in a block
// with no frame yet, or at exactly 64 MiB (the runtime's cap, where the last
// block cannot be known to be complete). Every complete goroutine before the
// cut is returned; the cut-off block is dropped and [Reader.Truncated]
// reports where it happened.
//
// # Memory
//
// [Reader] streams: it holds one goroutine at a time (two buffers it
// reuses) plus a bounded table of interned function and file names, so its
// memory does not grow with the size of the input. [Ingest] writes each
// goroutine's row as soon as it is read.
package dump
