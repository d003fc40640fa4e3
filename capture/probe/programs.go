//go:build linux

package probe

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// struct pt_regs (x86_64) offsets: the registers a uprobe sees.
const (
	regR14 = 8
	regBX  = 40
	regAX  = 80
	regCX  = 88
	regSP  = 152
)

// bpfUserStack is BPF_F_USER_STACK.
const bpfUserStack = 1 << 8

// bpf_ringbuf_submit flags and the bpf_ringbuf_query selector.
const (
	rbNoWakeup    = 1 // BPF_RB_NO_WAKEUP
	rbForceWakeup = 2 // BPF_RB_FORCE_WAKEUP
	rbAvailData   = 0 // BPF_RB_AVAIL_DATA
)

// progLicense must be GPL-compatible for bpf_probe_read_user and
// bpf_get_stack.
const progLicense = "Dual MIT/GPL"

// progConfig is what a program needs beyond its kind: the maps it writes
// to, the target's field offsets and the stack depth (0 = no stack).
type progConfig struct {
	events  *ebpf.Map // BPF_MAP_TYPE_RINGBUF
	drops   *ebpf.Map // array[numKinds] of u64: failed reservations per kind
	offsets Offsets
	depth   int // stack PCs per record, 0 to skip bpf_get_stack
	// wakeAt is the unread byte count past which a record wakes the
	// reader; below it records are written with BPF_RB_NO_WAKEUP and the
	// reader finds them when it polls (see Tracer.Run).
	wakeAt int
	// inFrame is set when the probe sits inside the function's frame (a
	// branch before a RET): BP is then the function's own frame and the
	// word at SP is not a return address, so it is not saved.
	inFrame bool
}

// body emits the kind-specific part of a program. On entry R6 = ctx
// (struct pt_regs *) and R7 = the reserved record; R8, R9 are free.
type body func(c progConfig) asm.Instructions

// buildProgram wraps a body into a complete program: reserve a record,
// fill the common header, run the body, optionally take the user stack,
// submit; count a drop when the ring buffer is full.
func buildProgram(kind uint32, c progConfig, b body) *ebpf.ProgramSpec {
	size := int32(headerSize + 8*c.depth)
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1).WithSymbol(kindNames[kind]),
		asm.LoadMapPtr(asm.R1, c.events.FD()),
		asm.Mov.Imm(asm.R2, size),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnRingbufReserve.Call(),
		asm.JEq.Imm(asm.R0, 0, "drop"),
		asm.Mov.Reg(asm.R7, asm.R0),
		asm.StoreImm(asm.R7, offKind, int64(kind), asm.Word),
		asm.FnGetSmpProcessorId.Call(),
		asm.StoreMem(asm.R7, offCPU, asm.R0, asm.Word),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.R7, offKtime, asm.R0, asm.DWord),
		asm.FnGetCurrentPidTgid.Call(),
		asm.StoreMem(asm.R7, offPidTgid, asm.R0, asm.DWord),
	}
	// Reserved ring buffer memory is not zeroed. (asm.StoreImm has no
	// 64-bit form, so store a zeroed register.)
	insns = append(insns, asm.Mov.Imm(asm.R9, 0))
	for off := int16(offGoid); off < headerSize; off += 8 {
		insns = append(insns, asm.StoreMem(asm.R7, off, asm.R9, asm.DWord))
	}
	insns = append(insns, b(c)...)
	if c.depth > 0 {
		insns = append(insns, stackInsns(c.depth, !c.inFrame)...)
	}
	// Waking the reader per record costs the traced thread an irq_work
	// and a wakeup each time: do it only when the ring is filling up.
	insns = append(insns,
		asm.LoadMapPtr(asm.R1, c.events.FD()),
		asm.Mov.Imm(asm.R2, rbAvailData),
		asm.FnRingbufQuery.Call(),
		asm.Mov.Imm(asm.R2, rbNoWakeup),
		asm.JLT.Imm(asm.R0, int32(c.wakeAt), "submit"),
		asm.Mov.Imm(asm.R2, rbForceWakeup),
		asm.Mov.Reg(asm.R1, asm.R7).WithSymbol("submit"),
		asm.FnRingbufSubmit.Call(),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
		// drop: count the lost record under its kind.
		asm.StoreImm(asm.RFP, -4, int64(kind), asm.Word).WithSymbol("drop"),
		asm.LoadMapPtr(asm.R1, c.drops.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	)
	return &ebpf.ProgramSpec{
		Name:         "ls_" + kindNames[kind],
		Type:         ebpf.Kprobe,
		Instructions: insns,
		License:      progLicense,
	}
}

// readUser emits bpf_probe_read_user(R7+dst, 8, src+off). On a fault the
// helper zeroes the destination.
func readUser(dst int16, src asm.Register, off int64) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.Add.Imm(asm.R1, int32(dst)),
		asm.Mov.Imm(asm.R2, 8),
		asm.Mov.Reg(asm.R3, src),
		asm.Add.Imm(asm.R3, int32(off)),
		asm.FnProbeReadUser.Call(),
	}
}

// loadReg emits dst = ctx->reg.
func loadReg(dst asm.Register, reg int16) asm.Instruction {
	return asm.LoadMem(dst, asm.R6, reg, asm.DWord)
}

// maxGSpan bounds the slice of runtime.g that gFields copies in one read.
const maxGSpan = 256

// gFields reads goid, parentGoid, gopc and startpc of the g in R8. When
// the four lie within maxGSpan bytes (152-312 in Go 1.26), one
// bpf_probe_read_user copies that slice of the g to the BPF stack and the
// fields are moved from there, instead of one helper call per field.
func gFields(o Offsets) asm.Instructions {
	fields := []struct {
		dst int16
		off int64
	}{{offGoid, o.GGoid}, {offParent, o.GParentGoid}, {offPC, o.GGopc}, {offStartPC, o.GStartPC}}
	lo, hi, aligned := fields[0].off, fields[0].off+8, true
	for _, f := range fields {
		lo, hi = min(lo, f.off), max(hi, f.off+8)
		aligned = aligned && (f.off-fields[0].off)%8 == 0
	}
	var out asm.Instructions
	if lo < 0 || hi-lo > maxGSpan || !aligned {
		for _, f := range fields {
			out = append(out, readUser(f.dst, asm.R8, f.off)...)
		}
		return out
	}
	span := int32(hi - lo)
	out = asm.Instructions{
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, -span),
		asm.Mov.Imm(asm.R2, span),
		asm.Mov.Reg(asm.R3, asm.R8),
		asm.Add.Imm(asm.R3, int32(lo)),
		asm.FnProbeReadUser.Call(),
	}
	for _, f := range fields {
		out = append(out,
			asm.LoadMem(asm.R1, asm.RFP, int16(int64(-span)+f.off-lo), asm.DWord),
			asm.StoreMem(asm.R7, f.dst, asm.R1, asm.DWord))
	}
	return out
}

// curGoid stores the goid of the user goroutine running on this thread:
// R14 is g (g0 on the system stack), so read g.m.curg.goid. The goid
// field doubles as scratch space; it stays 0 when m or curg is nil.
func curGoid(o Offsets) asm.Instructions {
	out := asm.Instructions{loadReg(asm.R8, regR14)}
	out = append(out, readUser(offGoid, asm.R8, o.GM)...)
	out = append(out,
		asm.LoadMem(asm.R8, asm.R7, offGoid, asm.DWord),
		asm.JEq.Imm(asm.R8, 0, "nocurg"),
	)
	out = append(out, readUser(offGoid, asm.R8, o.MCurg)...)
	out = append(out,
		asm.LoadMem(asm.R8, asm.R7, offGoid, asm.DWord),
		asm.JEq.Imm(asm.R8, 0, "nocurg"),
	)
	out = append(out, readUser(offGoid, asm.R8, o.GGoid)...)
	// Both jumps land on the next instruction emitted by the caller, so
	// end with a labelled no-op.
	out = append(out, asm.Mov.Reg(asm.R8, asm.R8).WithSymbol("nocurg"))
	return out
}

// stackInsns saves the return address at SP when asked (the frame walk
// misses the caller at entry and RET probes) and the user stack after the
// header.
func stackInsns(depth int, caller bool) asm.Instructions {
	var out asm.Instructions
	if caller {
		out = append(out, loadReg(asm.R8, regSP))
		out = append(out, readUser(offCaller, asm.R8, 0)...)
	}
	out = append(out,
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Reg(asm.R2, asm.R7),
		asm.Add.Imm(asm.R2, headerSize),
		asm.Mov.Imm(asm.R3, int32(8*depth)),
		asm.Mov.Imm(asm.R4, bpfUserStack),
		asm.FnGetStack.Call(),
		asm.StoreMem(asm.R7, offStackLen, asm.R0, asm.DWord),
	)
	return out
}

// goCreateBody runs at a RET of runtime.newproc1: AX is the new g.
func goCreateBody(c progConfig) asm.Instructions {
	return append(asm.Instructions{loadReg(asm.R8, regAX)}, gFields(c.offsets)...)
}

// goExitBody runs in runtime.gdestroy(gp), on g0: AX is the goroutine
// ending, whether it returned (goexit1 → goexit0) or was a coroutine
// (iter.Pull) that finished (coroexit → coroswitch_m), which never passes
// goexit1.
func goExitBody(c progConfig) asm.Instructions {
	return append(asm.Instructions{loadReg(asm.R8, regAX)}, gFields(c.offsets)...)
}

// allocBody runs in runtime.profilealloc(mp, x, size): BX=x, CX=size.
func allocBody(c progConfig) asm.Instructions {
	out := curGoid(c.offsets)
	return append(out,
		loadReg(asm.R8, regCX),
		asm.StoreMem(asm.R7, offSize, asm.R8, asm.DWord),
		loadReg(asm.R8, regBX),
		asm.StoreMem(asm.R7, offAddr, asm.R8, asm.DWord),
	)
}

// gcBody runs at the GC cycle start and mark termination.
func gcBody(c progConfig) asm.Instructions { return curGoid(c.offsets) }
