package probe

import (
	"debug/dwarf"
	"errors"
	"sort"
	"sync"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// inlineIndex expands a PC into its chain of inlined calls using DWARF
// (DW_TAG_inlined_subroutine). Each compilation unit's functions are
// indexed on first use; results are cached per PC. Safe for concurrent use.
type inlineIndex struct {
	d     *dwarf.Data
	mu    sync.Mutex
	units map[dwarf.Offset]*unitIndex // by compilation unit offset
	names map[dwarf.Offset]string     // abstract origin -> name
	cache map[uint64][]bundle.StackFrame
}

// unitIndex is one compilation unit: its functions sorted by address and
// its line table's file names.
type unitIndex struct {
	funcs []funcRange
	files []*dwarf.LineFile
	lines *dwarf.LineReader
}

type funcRange struct {
	low, high uint64
	off       dwarf.Offset
}

var errNoLines = errors.New("compilation unit has no line table")

func newInlineIndex(d *dwarf.Data) *inlineIndex {
	return &inlineIndex{d: d, units: map[dwarf.Offset]*unitIndex{},
		names: map[dwarf.Offset]string{}, cache: map[uint64][]bundle.StackFrame{}}
}

// frames returns the frames at pc, innermost first, or ok=false when DWARF
// does not cover pc.
func (ix *inlineIndex) frames(pc uint64) (frames []bundle.StackFrame, ok bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if f, ok := ix.cache[pc]; ok {
		return f, f != nil
	}
	defer func() {
		if recover() != nil { // malformed DWARF: fall back to the pclntab
			frames, ok = nil, false
		}
		ix.cache[pc] = frames
	}()
	r := ix.d.Reader()
	cu, err := r.SeekPC(pc)
	if err != nil {
		return nil, false
	}
	u, err := ix.unit(cu)
	if err != nil {
		return nil, false
	}
	i := sort.Search(len(u.funcs), func(i int) bool { return u.funcs[i].high > pc })
	if i == len(u.funcs) || u.funcs[i].low > pc {
		return nil, false
	}
	r.Seek(u.funcs[i].off)
	fn, err := r.Next()
	if err != nil || fn == nil {
		return nil, false
	}
	chain := []*dwarf.Entry{fn}
	if fn.Children {
		chain = ix.inlined(r, pc, chain)
	}
	var le dwarf.LineEntry
	if err := u.lines.SeekPC(pc, &le); err != nil || le.File == nil {
		return nil, false
	}
	file, line := le.File.Name, int64(le.Line)
	for k := len(chain) - 1; k >= 0; k-- {
		e := chain[k]
		frames = append(frames, bundle.StackFrame{Function: ix.name(e), File: file, Line: line, Inlined: k > 0})
		if idx, ok := e.Val(dwarf.AttrCallFile).(int64); ok && idx >= 0 && int(idx) < len(u.files) && u.files[idx] != nil {
			file = u.files[idx].Name
		}
		if l, ok := e.Val(dwarf.AttrCallLine).(int64); ok {
			line = l
		}
	}
	return frames, true
}

// inlined walks the children of the last entry of chain (the reader is
// positioned on them) and appends the inlined calls that contain pc,
// outermost first.
func (ix *inlineIndex) inlined(r *dwarf.Reader, pc uint64, chain []*dwarf.Entry) []*dwarf.Entry {
	for {
		e, err := r.Next()
		if err != nil || e == nil || e.Tag == 0 {
			return chain
		}
		isInl := e.Tag == dwarf.TagInlinedSubroutine
		if (isInl || e.Tag == dwarf.TagLexDwarfBlock) && ix.contains(e, pc) {
			if isInl {
				chain = append(chain, e)
			}
			if !e.Children {
				return chain
			}
			// Descend: deeper inlined calls are nested inside.
			return ix.inlined(r, pc, chain)
		}
		if e.Children {
			r.SkipChildren()
		}
	}
}

func (ix *inlineIndex) contains(e *dwarf.Entry, pc uint64) bool {
	rs, err := ix.d.Ranges(e)
	if err != nil {
		return false
	}
	for _, rg := range rs {
		if rg[0] <= pc && pc < rg[1] {
			return true
		}
	}
	return false
}

// name is e's name, following DW_AT_abstract_origin for inlined calls and
// for concrete instances of functions that are also inlined elsewhere.
func (ix *inlineIndex) name(e *dwarf.Entry) string {
	if n, ok := e.Val(dwarf.AttrName).(string); ok {
		return n
	}
	off, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
	if !ok {
		return "?"
	}
	if n, ok := ix.names[off]; ok {
		return n
	}
	r := ix.d.Reader()
	r.Seek(off)
	n := "?"
	if ae, err := r.Next(); err == nil && ae != nil {
		if s, ok := ae.Val(dwarf.AttrName).(string); ok {
			n = s
		}
	}
	ix.names[off] = n
	return n
}

// unit indexes the subprograms of compilation unit cu.
func (ix *inlineIndex) unit(cu *dwarf.Entry) (*unitIndex, error) {
	if u, ok := ix.units[cu.Offset]; ok {
		return u, nil
	}
	lr, err := ix.d.LineReader(cu)
	if err != nil || lr == nil {
		return nil, errNoLines
	}
	u := &unitIndex{files: lr.Files(), lines: lr}
	r := ix.d.Reader()
	r.Seek(cu.Offset)
	if _, err := r.Next(); err != nil {
		return nil, err
	}
	for {
		e, err := r.Next()
		if err != nil {
			return nil, err
		}
		if e == nil || e.Tag == 0 {
			break
		}
		if e.Tag == dwarf.TagSubprogram {
			if rs, err := ix.d.Ranges(e); err == nil {
				for _, rg := range rs {
					u.funcs = append(u.funcs, funcRange{low: rg[0], high: rg[1], off: e.Offset})
				}
			}
		}
		if e.Children {
			r.SkipChildren()
		}
	}
	sort.Slice(u.funcs, func(i, j int) bool { return u.funcs[i].low < u.funcs[j].low })
	ix.units[cu.Offset] = u
	return u, nil
}
