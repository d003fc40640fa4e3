package probe

import (
	"slices"

	"golang.org/x/arch/x86/x86asm"
)

// retSite is where a "return" probe of a function goes: Offset is the
// probed instruction and Ret the RET it stands for, both relative to the
// function start. Offset == Ret when no cheaper place was found.
type retSite struct {
	Offset, Ret uint64
}

// maxSiteDistance bounds how many instructions before a RET a site may be.
const maxSiteDistance = 24

// retSites returns one probe site per RET of fn (amd64) at which the
// function's result is in AX and which every return through that RET
// passes exactly once.
//
// A uprobe on a RET costs far more than one on a branch: the kernel
// emulates JMP/Jcc/CALL (and PUSH on recent kernels) but executes other
// instructions out of line with a single-step trap, a second exception
// (measured on a 6.18 VM: about 3.4 µs per hit on a RET against 0.3 µs on
// a Jcc, with an empty program). So each site is the last rel8/rel32 JMP
// or Jcc before the RET such that
//   - the instructions between it and the RET are plain moves and
//     arithmetic (no CALL, RET or indirect jump) that never name AX;
//   - every branch in that stretch, the site included, lands inside it;
//   - no branch from elsewhere in the function lands inside it.
//
// Every path to the RET thus crosses the site once, with AX already
// holding the result. When no such branch exists, or the function has an
// indirect jump (a jump table, whose targets are unknown), the site is
// the RET itself.
func (b *Binary) retSites(fn Func) ([]retSite, error) {
	code, err := b.code(fn)
	if err != nil {
		return nil, err
	}
	rets, err := b.RetOffsets(fn)
	if err != nil {
		return nil, err
	}
	return findRetSites(code, rets), nil
}

// decoded is one instruction of a linear sweep.
type decoded struct {
	off    int
	inst   x86asm.Inst
	target int  // branch target offset, -1 if none
	branch bool // a direct JMP or Jcc the kernel emulates
}

// findRetSites implements retSites on fn's code and its RET offsets.
func findRetSites(code []byte, rets []uint64) []retSite {
	var insts []decoded
	indirect := false
	for off := 0; off < len(code); {
		inst, err := x86asm.Decode(code[off:], 64)
		if err != nil || inst.Len == 0 {
			off++
			continue
		}
		d := decoded{off: off, inst: inst, target: -1}
		if rel, ok := inst.Args[0].(x86asm.Rel); ok && inst.Op != x86asm.CALL {
			d.target = off + inst.Len + int(rel)
			d.branch = emulatedBranch(code[off:])
		} else if inst.Op == x86asm.JMP {
			indirect = true
		}
		insts = append(insts, d)
		off += inst.Len
	}
	sites := make([]retSite, len(rets))
	for i, r := range rets {
		sites[i] = retSite{Offset: r, Ret: r}
		if indirect {
			continue
		}
		ri := slices.IndexFunc(insts, func(d decoded) bool { return uint64(d.off) == r })
		if ri < 0 {
			continue
		}
		if s, ok := siteBefore(insts, ri); ok {
			sites[i].Offset = uint64(insts[s].off)
		}
	}
	return sites
}

// siteBefore returns the index of the site for the RET at insts[ri].
func siteBefore(insts []decoded, ri int) (int, bool) {
	end := insts[ri].off
	for s := ri - 1; s >= 0 && ri-s <= maxSiteDistance; s-- {
		d := insts[s]
		inside := func(t int) bool { return t > d.off && t <= end }
		if d.target >= 0 {
			if !inside(d.target) {
				return 0, false // a way out of the stretch: no site here or earlier
			}
		} else if !plain(d.inst) {
			return 0, false
		}
		if !d.branch {
			continue
		}
		entered := false
		for j, o := range insts {
			if (j < s || j > ri) && o.target >= 0 && inside(o.target) {
				entered = true
				break
			}
		}
		if !entered {
			return s, true
		}
	}
	return 0, false
}

// emulatedBranch reports whether code starts with a JMP or Jcc, rel8 or
// rel32, without prefixes: the forms the kernel's x86 uprobe code
// emulates instead of single-stepping.
func emulatedBranch(code []byte) bool {
	switch {
	case len(code) >= 1 && (code[0] == 0xeb || code[0] == 0xe9 || code[0]&0xf0 == 0x70):
		return true
	case len(code) >= 2 && code[0] == 0x0f && code[1]&0xf0 == 0x80:
		return true
	}
	return false
}

// plain reports whether inst may lie between a site and its RET: a move,
// arithmetic or comparison that neither names AX nor writes it implicitly.
func plain(inst x86asm.Inst) bool {
	switch inst.Op {
	case x86asm.MOV, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.LEA,
		x86asm.ADD, x86asm.SUB, x86asm.INC, x86asm.DEC, x86asm.CMP, x86asm.TEST,
		x86asm.AND, x86asm.OR, x86asm.XOR, x86asm.NOP, x86asm.POP:
	default:
		return false
	}
	for _, a := range inst.Args {
		if r, ok := a.(x86asm.Reg); ok {
			switch r {
			case x86asm.AL, x86asm.AH, x86asm.AX, x86asm.EAX, x86asm.RAX:
				return false
			}
		}
	}
	return true
}
