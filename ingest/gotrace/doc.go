// Package gotrace turns Go execution traces (runtime/trace output and
// /debug/pprof/trace, Go 1.22+ wire format) into bundle tables, reading
// them with golang.org/x/exp/trace one generation at a time, several
// generations at once, and decodes goroutines' state changes from the raw
// trace again when asked ([TransitionsFrom]).
//
// # Tables
//
//   - trace_goroutines: one row per goroutine per trace window, written
//     when the goroutine ends or, for goroutines alive at the end, when the
//     trace ends (ended_ts null). parent_goid, created_ts and
//     creation_stack_id (the creator's stack) come from the creation event;
//     start_function is the outermost frame of the goroutine's first known
//     stack; last_state/last_reason/last_stack_id are its state at the end
//     of the window, e.g. waiting / "chan receive" / where it blocked
//     ("notexist" for a goroutine that ended). States are undetermined,
//     notexist, runnable, running, waiting and syscall.
//     A cgo callback's goroutine, which the runtime creates and destroys
//     for each callback from a C thread and whose id comes back with a
//     later callback, has one row: from its first creation to its last
//     end.
//   - trace_generations: one row per generation of the raw trace: its
//     byte range (offset, length) in the raw file a.Name names, the wall
//     time of its first and last event, how trace time maps to wall and
//     monotonic time in it, and its event and goroutine counts. It is
//     what [TransitionsFrom] reads the raw trace back by.
//   - trace_transitions is not written (it was, before trace_generations):
//     one row per state change is tens of millions of rows in a busy
//     trace, read only for the few goroutines a view shows, so
//     [TransitionsFrom] decodes them on demand from the generations those
//     goroutines lived in. Its rows (ts, mono_ns, goid, from, to, reason,
//     stack_id) keep the table's meaning: reason is the trace's ("chan
//     send", "select", "sync", "sleep", "network", …), the stack of a
//     creation (notexist → runnable/waiting) is the creator's, and a
//     goroutine already alive when a window starts shows up first as
//     undetermined → its state, with the stack where it was parked.
//   - spans: tasks (span_id = task_id = the runtime's task id,
//     parent_span_id = the parent task), regions (parent = the enclosing region on the same
//     goroutine, else the region's task) and log events (kind "log",
//     name = category, message = text, start = end). A span begun before
//     the window has a null start_ts; a span still open at the end of the
//     trace (or a region on a goroutine that ended) has a null end_ts.
//     Region and log span ids of window k (0-based, counted in the
//     manifest's trace "windows" setting) start at (k+1)<<40, so windows
//     never collide.
//   - metrics: heap_live_bytes, heap_goal_bytes and gomaxprocs from the
//     trace's metric events; gc_cycle (1, 2, … at each GC mark start),
//     gc_mark_ns, stw_pause_ns (every stop-the-world) and gc_pause_ns (the
//     GC ones) from range events; goroutines (live count) at most every
//     10 ms of trace time, at each GC start and at the end.
//   - clock_sync: one row (source "trace") per clock snapshot.
//
// # Time
//
// The trace clock is CLOCK_MONOTONIC on Linux (nanotime). Go 1.25+ traces
// carry a clock snapshot (trace, monotonic, wall) per generation; each
// generation's events are mapped through its own snapshot
// (method "trace-snapshot"). Older traces use Options.WallOffsetNS (wall
// minus CLOCK_MONOTONIC from capture's clock_sync, method "offset"). When
// neither is known the trace's end (estimated from batch headers) is
// placed at Options.Now ("anchored-end"), or its start when the input is
// not seekable ("anchored-start"); those times are approximate. The method
// and offset are recorded in the manifest's trace source settings, and in
// the manifest's clock when no other source set it. mono_ns columns hold
// CLOCK_MONOTONIC.
//
// # Several windows of one process
//
// capture records a process in successive trace windows; each is passed
// to [Ingest] separately, into the same bundle, and lines up with the
// others on the wall-clock timeline. Goroutine ids are never reused within
// a process, so the rows of one goroutine in several windows describe the
// same goroutine. Analysis merges trace_goroutines rows by goid:
//
//   - created_ts, parent_goid, creation_stack_id: from the
//     row that has them (only the window that saw the creation does; in
//     later windows they are null);
//   - start_function: the first non-empty one, preferring the row with a
//     creation;
//   - ended_ts: the non-null one (a goroutine ends at most once); if none,
//     the goroutine was alive at the end of the last window that saw it;
//   - last_state, last_stack_id: from the row of the latest window that saw
//     the goroutine;
//   - last_reason: from that row too, except when it is empty while the
//     state is waiting (the goroutine was already parked when that window
//     began, and a window start carries no reason): then the latest
//     non-empty reason of an earlier window.
//
// Tasks keep their runtime id across windows, so task spans merge the same
// way by span_id (earliest known start, the non-null end).
//
// # Performance
//
// A generation (about a second of the program) carries its own string
// and stack tables and every live goroutine's status, so it can be read
// on its own. One goroutine (the framer) reads only batch headers and cuts
// the input into generations; Options.Workers workers (one per two CPUs,
// at most four) decode generations with x/exp/trace at once, each on two
// goroutines: one runs the parser and copies its events into batches,
// going on to its next generation as soon as it has read one, the other
// reduces them to a few steps per goroutine life (its first event, its
// end, what the row needs), varint-encoded in parts handed over as they
// fill; this goroutine merges the parts in trace order into rows; and a
// sink goroutine interns stacks and writes batches (trace_goroutines and
// spans LZ4-compressed, see bundle's tableCodec). With one worker (two or
// three CPUs) there is nothing to merge: this goroutine reduces the
// parser's events and applies them to the rows at once, without encoding
// steps, and each goroutine state change goes straight to the live
// goroutine, without a life summed up first (direct.go). A file is read where
// it lies (workers read their generation's byte range); a stream is
// buffered a few generations at a time. gotrace_bench_test.go compares
// Ingest with a bare x/exp/trace loop on a 220 MB trace of
// testdata/bigprog; see its comments for the commands.
//
// # Bad input
//
// Input without the "go 1.NN trace" header is refused ([ErrNotTrace]);
// Go 1.21 and older formats are refused ([ErrUnsupported]). A corrupt
// trace is refused with [ErrCorrupt] and a [*CorruptError] saying where
// and what: a byte that does not start a batch, a batch larger than the
// runtime writes, generation 0, generations out of order or interleaved,
// or a complete generation that x/exp/trace cannot decode. A trace cut
// short keeps every complete generation: the artifact and the trace
// source are marked truncated with where and why, and [Ingest] returns
// nil; cut before its first generation is complete, it is refused with
// [ErrIncomplete], since nothing is left to keep. A generation is
// complete when its end-of-generation marker (Go 1.26+), or the next
// generation, follows it; the last generation of an older trace is
// complete when it ends with a string or stack table, which the runtime
// writes last, or when x/exp/trace reads it alone to its end, as Go's
// reader takes a generation to end with the input (a 71-byte trace of
// Go's fuzz corpus has no table and go tool trace reads it).
package gotrace
