package probe

import (
	"github.com/leakscope/leakscope/ingest/bundle"
)

// Symbolizer maps PCs of one target process to function, file and line.
// With DWARF it expands inlined calls into their own frames (marked
// Inlined); without DWARF (stripped binaries) it uses the pclntab, which
// gives one frame per PC: the outermost function with the file and line
// of the innermost inlined code. It is safe for concurrent use and stays
// usable after the Binary or Tracer it came from is closed.
type Symbolizer struct {
	bin  *Binary
	bias uint64 // load bias of a PIE executable, 0 otherwise
}

// NewSymbolizer returns a symbolizer for bin. bias is subtracted from every
// runtime PC before lookup (non-zero only for PIE executables; see
// [LoadBias]).
func NewSymbolizer(bin *Binary, bias uint64) *Symbolizer {
	return &Symbolizer{bin: bin, bias: bias}
}

// FramesAt returns the frames of one PC, innermost first (several when
// calls were inlined there). For a return address (any stack entry but
// the first, or a gopc) pass retAddr=true: the lookup then uses pc-1,
// which lies in the call instruction, as runtime tracebacks do. It returns
// nil when pc is outside the binary's Go functions.
func (s *Symbolizer) FramesAt(pc uint64, retAddr bool) []bundle.StackFrame {
	if pc == 0 || pc < s.bias {
		return nil
	}
	pc -= s.bias
	if retAddr {
		pc-- // the call instruction, in the caller even for a tail call
	}
	fn := s.bin.table.PCToFunc(pc)
	if fn == nil {
		return nil
	}
	if s.bin.inl != nil {
		if frames, ok := s.bin.inl.frames(pc); ok {
			return frames
		}
	}
	file, line, _ := s.bin.table.PCToLine(pc)
	return []bundle.StackFrame{{Function: fn.Name, File: file, Line: int64(line)}}
}

// Frame returns the innermost frame of one PC (see [Symbolizer.FramesAt]);
// ok is false when pc is outside the binary's Go functions.
func (s *Symbolizer) Frame(pc uint64, retAddr bool) (f bundle.StackFrame, ok bool) {
	frames := s.FramesAt(pc, retAddr)
	if len(frames) == 0 {
		return bundle.StackFrame{}, false
	}
	return frames[0], true
}

// Frames symbolises a stack as in [Event.Stack], leaf first: pcs[0] is an
// exact PC, the rest are return addresses. Inlined calls become frames of
// their own. Unknown PCs (outside Go code, e.g. in a C library) become
// frames named "?" so that depth is kept.
func (s *Symbolizer) Frames(pcs []uint64) []bundle.StackFrame {
	out := make([]bundle.StackFrame, 0, len(pcs))
	for i, pc := range pcs {
		frames := s.FramesAt(pc, i > 0)
		if len(frames) == 0 {
			frames = []bundle.StackFrame{{Function: "?"}}
		}
		out = append(out, frames...)
	}
	return out
}

// FuncName returns the name of the innermost function at pc, or "".
func (s *Symbolizer) FuncName(pc uint64) string {
	f, _ := s.Frame(pc, false)
	return f.Function
}
