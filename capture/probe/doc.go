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
//   - go_create: a plain uprobe on every RET of runtime.newproc1, where AX
//     is the new g with goid, parentGoid, gopc and startpc already set.
//     Uretprobes are never used: they corrupt goroutine stacks.
//   - go_exit: runtime.goexit1 after its stack-check prologue; R14 is g.
//   - alloc: runtime.profilealloc(mp, x, size) after the prologue; BX=x,
//     CX=size, the goroutine from R14 via g.m.curg.
//   - gc_start: runtime.(*gcControllerState).startCycle, gc_end:
//     runtime.gcMarkTermination, both after the prologue.
//
// Entry probes sit just after the JBE to morestack so that a function that
// grows its stack is not counted twice (see docs/EBPF.md).
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
// BenchmarkProbeOverhead measures about 2 µs per probe hit (uprobe trap
// plus program) on a 2-core VM, about 3 µs for go_create with a stack.
// Goroutine creation and exit is where a busy service pays: creation
// stacks are therefore off by default ([Options.CreateStacks]). Alloc
// probes fire at the runtime's MemProfileRate only.
//
// Only linux/amd64 is supported; elsewhere [Attach] returns an error
// wrapping [ErrNotSupported]. Binary inspection ([OpenBinary]) and
// symbolisation ([Symbolizer]) work on any platform.
package probe
