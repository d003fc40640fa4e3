// Package capture records a live Go process into a leakscope bundle.
//
// [Run] scrapes the target's net/http/pprof endpoints on an interval
// (goroutine debug=2 dumps, goroutine, heap and allocs profiles, the
// goroutineleak profile when the runtime serves it, a CPU profile window and
// a runtime/trace window), ingests each artifact into the bundle as it
// arrives and keeps the original under raw/. When it may, it also attaches
// the eBPF tracer of capture/probe to the target and streams goroutine
// creation, exit, sampled allocations and GC cycles into the ebpf_events
// table, with timestamps mapped to wall-clock time through the clock_sync
// pairs it records (see docs/DESIGN.md, Time).
//
// Without the privileges or kernel support for eBPF, Run says so once on
// its progress writer, records why in the manifest and carries on with the
// HTTP sources. A target that exits or stops answering ends the capture
// cleanly with what was recorded. The bundle writer flushes every second, so
// a capture killed with SIGKILL leaves a bundle readable up to its last
// flush.
//
// [Upload] sends a bundle to a workbench (POST /api/captures) as a streamed
// .tar.zst, retrying connection errors and 5xx answers.
package capture
