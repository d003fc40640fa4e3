package probe

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// RetOffsets returns the offsets, relative to the function start, of every
// RET instruction of fn (amd64). Go functions hold no data in their text,
// so a linear sweep decodes them exactly; undecodable bytes (padding) are
// skipped one at a time.
func (b *Binary) RetOffsets(fn Func) ([]uint64, error) {
	code, err := b.code(fn)
	if err != nil {
		return nil, err
	}
	var rets []uint64
	for off := 0; off < len(code); {
		inst, err := x86asm.Decode(code[off:], 64)
		if err != nil || inst.Len == 0 {
			off++
			continue
		}
		if inst.Op == x86asm.RET {
			rets = append(rets, uint64(off))
		}
		off += inst.Len
	}
	if len(rets) == 0 {
		return nil, fmt.Errorf("%s: no RET instruction found", fn.Name)
	}
	return rets, nil
}

// PrologueEnd returns the offset just after fn's stack-bound check, the
// `CMP SP|R12, 16(R14); JBE morestack` pair (amd64), so that an entry
// probe there fires once per call even when the function grows its stack
// and re-runs from the entry. Functions without a stack check (NOSPLIT)
// return 0 and ok=false.
func (b *Binary) PrologueEnd(fn Func) (off uint64, ok bool, err error) {
	code, err := b.code(fn)
	if err != nil {
		return 0, false, err
	}
	const window = 64 // the check is within the first few instructions
	sawCheck := false
	for pos := 0; pos < len(code) && pos < window; {
		inst, err := x86asm.Decode(code[pos:], 64)
		if err != nil {
			return 0, false, fmt.Errorf("%s: decode at +%#x: %w", fn.Name, pos, err)
		}
		pos += inst.Len
		switch {
		case inst.Op == x86asm.CMP && usesStackGuard(inst):
			sawCheck = true
		case sawCheck && inst.Op == x86asm.JBE:
			return uint64(pos), true, nil
		case inst.Op == x86asm.PUSH || inst.Op == x86asm.RET:
			// The frame is being set up: there was no check.
			return 0, false, nil
		}
	}
	return 0, false, nil
}

// usesStackGuard reports whether inst reads g.stackguard0, 16(R14).
func usesStackGuard(inst x86asm.Inst) bool {
	for _, a := range inst.Args {
		if m, ok := a.(x86asm.Mem); ok && m.Base == x86asm.R14 && m.Disp == 16 {
			return true
		}
	}
	return false
}
