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
// Formats of Go 1.18 through 1.27 are understood: "created by f" (before
// 1.21) and "created by f in goroutine N" (1.21+), "...additional frames
// elided..." (before 1.21) and "...N frames elided..." (1.21+), headers with
// "gp=0x... m=N mp=0x..." and frames with "fp= sp= pc=" (tracebacks at
// level system or crash), and the header extras "N minutes", "locked to
// thread", "synctest bubble N", "(durable)", "(leaked)", "(scan)" and
// "labels:{...}" (Go 1.26 with GODEBUG=tracebacklabels=1) or, after the
// brackets, " {k: v, ...}" (Go 1.27).
//
// # Logs as users have them
//
// Tracebacks are read wherever they are in the input, which is read whole,
// as a stream: after any amount of application log, inside the envelopes
// container runtimes put around each line (CRI's "2026-12-01T08:00:00Z
// stderr F ...", with P parts of split lines joined; Docker's json-file
// records; kubectl logs --timestamps), indented (a dump pasted indented, or
// logged by a test: "    x_test.go:12: goroutine 7 [running]:" with the
// next lines indented four more spaces), in go test output (-timeout
// panics, FAIL lines) and go run output ("exit status 2", with or without a
// final newline). Each stream of a container log (stdout, stderr) is parsed
// on its own, so one cannot interrupt a traceback on the other.
//
// Race detector reports ("WARNING: DATA RACE", with their accesses and
// where each goroutine was created) are read too, as [Race] values beside
// the goroutines: [Reader.Races].
//
// # What is skipped and what is an error
//
// A goroutine block starts at a header line ("goroutine 18 [chan send]:")
// and ends at a blank line, at the next header, at a line that ends it by
// its form (a crash's register dump, which GOTRACEBACK=crash prints right
// after each thread's stack; "exit status N"; go test's FAIL; a race
// report), once its "created by" frame is complete at any other line, or
// at a line that belongs to no traceback. The block is kept as far as it
// goes; when the line cut a frame off from its location, [Reader.Notes]
// says so. Lines between blocks are skipped without complaint: crash
// tracebacks come from logs. Frames without parentheses followed by a
// location (a cgo symbolizer's C functions, "??") are frames; "?? :0"
// locations are accepted. Input with no goroutine block and no race
// report is an error wrapping [ErrNoGoroutines].
//
// # Truncated input
//
// The reader recognises a dump cut off inside a goroutine block: at the end
// of input inside a line that may belong to the block (the start of a
// frame or of its location, of a header), inside an unfinished frame, in a
// block with no frame yet, inside a goroutine header line ("...\n\ngoroutine
// 55"), or at exactly 64 MiB (the runtime's cap, where the last block
// cannot be known to be complete). A last line without a newline that
// cannot continue the block ("exit status 2", other output) does not cut
// it, nor does a last frame location that is whole ("\t/x.go:12 +0x2f":
// a traceback whose writer wrote no final newline). Every complete goroutine before the cut is returned; the cut-off
// block is dropped and [Reader.Truncated] reports where it happened.
//
// # Memory
//
// [Reader] streams: it holds one goroutine at a time (two buffers it
// reuses) plus a bounded table of interned function and file names, so its
// memory does not grow with the size of the input. [Ingest] writes each
// goroutine's row as soon as it is read.
//
// # Parallel parsing
//
// [Ingest] parses on a worker per CPU (GOMAXPROCS; one CPU parses
// sequentially). A splitter reads the input in chunks of about 1 MiB of
// whole lines, cut before a goroutine header that starts a line after a
// blank one, and each worker parses a chunk from a fresh reader state;
// goroutines, counts, notes and races are taken in input order. A chunk
// parsed so is what the sequential reader makes of it only when the state
// before it was at rest (no block, race report or split log line open),
// which each worker tells of its chunk's end: after a chunk that did not
// end at rest (input with no such header in 4 MiB is cut after a line,
// which may fall inside an indented dump's block, a container log's
// records or a race report), or one holding a line longer than 256 KiB,
// the reader reads on itself until a chunk ends at rest, and takes the
// workers' parse again from the next one (after eight chunks in a row it
// reads the rest itself). The end of the input is always read by the
// reader itself. So rows, stack ids, notes and truncation are the
// sequential reader's in every case; plain tracebacks and debug=2 dumps
// are parsed in parallel throughout.
// At most 2×workers+2 chunks are in flight, so memory stays bounded.
package dump
