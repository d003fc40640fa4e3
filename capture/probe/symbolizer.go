package probe

import (
	"github.com/leakscope/leakscope/ingest/bundle"
)

// Symbolizer maps PCs of one target process to function, file and line
// using the binary's pclntab (present even in stripped binaries). Inlined
// calls are not expanded: a PC inside inlined code reports the outer
// function with the inlined code's file and line. It is safe for
// concurrent use.
type Symbolizer struct {
	bin  *Binary
	bias uint64 // load bias of a PIE executable, 0 otherwise
}

// NewSymbolizer returns a symbolizer for bin. bias is subtracted from every
// runtime PC before lookup (non-zero only for PIE executables; see
// [LoadBias]). bin must stay open while the symbolizer is used.
func NewSymbolizer(bin *Binary, bias uint64) *Symbolizer {
	return &Symbolizer{bin: bin, bias: bias}
}

// Frame returns the frame of one PC. For a return address (any stack
// entry but the first, or a gopc) pass retAddr=true: the lookup then uses
// pc-1, which lies in the call instruction, as runtime tracebacks do.
// ok is false when pc is outside the binary's Go functions.
func (s *Symbolizer) Frame(pc uint64, retAddr bool) (f bundle.StackFrame, ok bool) {
	if pc == 0 || pc < s.bias {
		return bundle.StackFrame{}, false
	}
	pc -= s.bias
	if retAddr {
		pc-- // the call instruction, in the caller even for a tail call
	}
	fn := s.bin.table.PCToFunc(pc)
	if fn == nil {
		return bundle.StackFrame{}, false
	}
	file, line, _ := s.bin.table.PCToLine(pc)
	return bundle.StackFrame{Function: fn.Name, File: file, Line: int64(line)}, true
}

// Frames symbolises a stack as in [Event.Stack]: pcs[0] is an exact PC,
// the rest are return addresses. Unknown PCs (outside Go code, e.g. in a
// C library) become frames named "?" so that depth is kept.
func (s *Symbolizer) Frames(pcs []uint64) []bundle.StackFrame {
	out := make([]bundle.StackFrame, 0, len(pcs))
	for i, pc := range pcs {
		f, ok := s.Frame(pc, i > 0)
		if !ok {
			f = bundle.StackFrame{Function: "?"}
		}
		out = append(out, f)
	}
	return out
}

// FuncName returns the name of the function containing pc, or "".
func (s *Symbolizer) FuncName(pc uint64) string {
	f, _ := s.Frame(pc, false)
	return f.Function
}
