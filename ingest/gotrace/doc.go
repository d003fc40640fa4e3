// Package gotrace turns Go execution traces (runtime/trace output and
// /debug/pprof/trace, Go 1.22+ wire format) into bundle tables, reading
// them event by event with golang.org/x/exp/trace.
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
//   - trace_transitions: one row per goroutine state change (from != to),
//     with the trace's reason ("chan send", "select", "sync", "sleep",
//     "network", "GC mark assist wait for work", …) and stack. For a
//     creation (notexist → runnable/waiting) the stack is the creator's.
//     A goroutine already alive when the window starts shows up first as
//     undetermined → its state, with the stack where it was parked.
//     runnable → running rows (the scheduler starting a goroutine: a third
//     of all changes, without reason or stack) are left out unless
//     Options.SchedulingTransitions is set; a goroutine's running periods
//     then show as the time between its unblock and its next change.
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
//   - created_ts, created_mono_ns, parent_goid, creation_stack_id: from the
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
// Events are read on one goroutine and turned into rows on another; state
// transitions (nine events in ten) cross undecoded and are decoded on the
// second goroutine, leaving the reader little more than x/exp/trace's own
// work. trace_transitions, trace_goroutines and spans are built as plain
// column slices or builders and handed, in batches of up to 256 Ki rows
// (arrow sets up a zstd encoder per batch), to a third goroutine that
// writes (zstd-compresses) them. Stack handles are interned
// once per generation through a cache keyed by the handle, and each
// goroutine remembers its last handle; live goroutines sit in a table
// paged by goid (see liveTable) rather than a map.
// gotrace_bench_test.go compares Ingest with a bare x/exp/trace loop on a
// 220 MB trace of testdata/bigprog; see its comments for the commands.
//
// # Bad input
//
// Input without the "go 1.NN trace" header is refused ([ErrNotTrace]);
// Go 1.21 and older formats are refused ([ErrUnsupported]). A trace cut
// short or corrupt keeps every complete generation (x/exp/trace reads a
// whole generation before emitting its events, so a truncated tail costs
// only the incomplete generation); the artifact and the trace source are
// marked truncated with where and why, and [Ingest] returns nil.
package gotrace
