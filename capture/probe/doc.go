// Package probe is leakscope's eBPF event source: it attaches uprobes to a
// running Go process and reports goroutine creation and exit, sampled heap
// allocations and GC cycles as [Event] values, with nanosecond
// CLOCK_MONOTONIC timestamps taken in the kernel.
//
// # Why hand-written BPF instead of C and bpf2go
//
// The BPF programs are assembled at load time with cilium/ebpf's asm
// package rather than compiled from C with clang and bpf2go:
//
//   - no toolchain: nodes and CI need neither clang nor libbpf headers, and
//     there is no generated .o file to keep in step with its source;
//   - the runtime.g and runtime.m field offsets differ per target binary
//     (they come from its DWARF, or a per-Go-version table), so they are
//     baked into the instructions as constants when the program is built,
//     which is exactly what a relocation or a volatile const would do;
//   - the programs are tiny (a register read, two to four
//     bpf_probe_read_user calls, an optional bpf_get_stack, one ring buffer
//     record), so assembly stays short and easy to review (see programs.go).
//
// # Probe placement (amd64, Go ABIInternal)
//
//   - go_create: a plain uprobe at the end of runtime.newproc1, where AX
//     is the new g with goid, parentGoid, gopc and startpc already set.
//     Uretprobes are never used: they corrupt goroutine stacks. The probe
//     sits on the last JMP/Jcc that every path to a RET crosses with AX
//     untouched after it (releasem's preemption check, see retsite.go),
//     not on the RET: the kernel emulates branches but single-steps a RET
//     out of line, a second trap that made the probe cost about 3.4 µs
//     instead of 0.3 µs per hit. It falls back to the RET when no such
//     branch exists (noted in [BinaryInfo.Notes]).
//   - go_exit: runtime.gdestroy(gp) after its stack-check prologue; AX is
//     the ending goroutine. Every end passes there: a goroutine that
//     returns (goexit1 → goexit0) and a finished iter.Pull coroutine
//     (coroswitch_m), which never reaches goexit1.
//   - alloc: runtime.profilealloc(mp, x, size) after the prologue; BX=x,
//     CX=size, the goroutine from R14 via g.m.curg.
//   - gc_start: runtime.(*gcControllerState).startCycle, gc_end:
//     runtime.gcMarkTermination, both after the prologue.
//
// Entry probes sit just after the JBE to morestack so that a function that
// grows its stack is not counted twice (see docs/EBPF.md). That
// instruction is the frame's PUSHQ BP, which kernels since 6.x emulate
// too.
//
// # Stacks
//
// Stacks come from bpf_get_stack(BPF_F_USER_STACK), the kernel's
// frame-pointer walk, written into the ring buffer record. At a RET probe
// (and at entry probes on kernels that do not recognise a function entry)
// BP still or again points at the caller's frame, so the walk skips the
// immediate caller; each program also saves the return address at SP and
// the decoder puts it back when missing. The walk from newproc1 on g0
// crosses systemstack back into the creating goroutine's stack, so
// go_create stacks reach the go statement's function.
//
// # Cost
//
// BenchmarkProbeOverhead measures, on a 2-core 6.18 VM, about 0.5-0.7 µs
// per goroutine event (uprobe trap plus program; 2.1 µs before the
// go_create probe left the RET), 1.5-2 µs for go_create or alloc with a
// stack (bpf_get_stack's frame walk). Goroutine creation and exit is where
// a busy service pays: creation stacks are therefore off by default
// ([Options.CreateStacks]). Alloc probes fire at the runtime's
// MemProfileRate only (one per 512 KiB allocated by default).
//
// Records are submitted with BPF_RB_NO_WAKEUP while the ring buffer is
// less than a quarter full, and with BPF_RB_FORCE_WAKEUP beyond: a wakeup
// per record costs the traced thread an irq_work and a reader wakeup,
// which in a capture cost more than the probe itself. [Tracer.Run] polls
// every 50 ms instead.
//
// # Go releases
//
// The probes are tested with Go 1.22 to 1.27 (dev/versions runs the
// version matrix): the probed functions exist in each with the same
// meaning, and the runtime.g and runtime.m offsets come from the target's
// DWARF, or for stripped binaries from a table per release checked
// against DWARF builds (see offsetTable). Other releases are tried from
// DWARF, with a warning.
//
// Only linux/amd64 is supported; elsewhere [Attach] returns an error
// wrapping [ErrNotSupported]. Binary inspection ([OpenBinary]) and
// symbolisation ([Symbolizer]) work on any platform.
package probe
