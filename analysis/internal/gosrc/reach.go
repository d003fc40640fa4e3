package gosrc

import (
	"go/types"

	"github.com/leakscope/leakscope/internal/gosym"
)

// Reach is the set of classes some variables can lead to: what they
// are, point to, hold in their fields (by their types: every instance of
// a field is one class), and, for an interface, what its dynamic types
// hold, a few hops deep. All is set when the walk stopped at its bounds:
// the variables may lead anywhere.
type Reach struct {
	set map[node]bool
	all bool
}

// Has reports whether the variables can lead to an object of class c.
func (r Reach) Has(c Class) bool { return r.has(c.n) }

// has is Has on a class root.
func (r Reach) has(n node) bool { return r.all || r.set[n] }

// Bounds of a reach walk.
const (
	maxReachDepth = 6
	maxReach      = 4096
)

// reachOf walks from some variables.
func (p *Program) reachOf(vars []*types.Var) Reach {
	w := p.newReachWalk(false)
	for _, v := range vars {
		w.addVar(v, 0)
	}
	return w.r
}

// newReachWalk starts a walk with nothing reached.
func (p *Program) newReachWalk(unbounded bool) *reachWalk {
	return &reachWalk{p: p, r: Reach{set: map[node]bool{}}, types: map[types.Type]bool{}, funcs: map[*Func]bool{}, unbounded: unbounded}
}

// reachWalk is reachOf's state.
type reachWalk struct {
	p     *Program
	r     Reach
	types map[types.Type]bool
	funcs map[*Func]bool
	// unbounded walks are limited by depth only (the escape marking
	// walks the whole program's roots at once).
	unbounded bool
}

// addVar adds a variable's storage, what it points to and what its type
// holds.
func (w *reachWalk) addVar(v *types.Var, depth int) {
	n := w.p.flow.varNode(v)
	w.addClass(n, depth)
	if n != none {
		w.addClass(w.p.flow.cl.pts(n), depth)
	}
	w.addType(v.Type(), depth)
}

// addClass adds a class and what it leads to.
func (w *reachWalk) addClass(n node, depth int) {
	if n == none || w.r.all {
		return
	}
	cl := &w.p.flow.cl
	r := cl.find(n)
	if w.r.set[r] {
		return
	}
	if !w.unbounded && (len(w.r.set) >= maxReach || depth > maxReachDepth) {
		w.r.all = true
		return
	}
	w.r.set[r] = true
	d := cl.data(r)
	w.addClass(d.pts, depth+1)
	w.addClass(d.elem, depth+1)
	for _, t := range d.dyn {
		w.addType(t, depth+1)
	}
	for _, t := range d.sent {
		w.addType(t, depth+1)
	}
	for _, f := range d.funcs {
		if !w.funcs[f] {
			w.funcs[f] = true
			for _, v := range w.p.flow.captured[f] {
				w.addVar(v, depth+1)
			}
		}
	}
}

// addType adds the fields a type's values hold (through pointers,
// containers and channels).
func (w *reachWalk) addType(t types.Type, depth int) {
	if t == nil || w.r.all || w.types[t] {
		return
	}
	w.types[t] = true
	if scalar(t) {
		w.addScalar(t)
		return
	}
	if !w.unbounded && depth > maxReachDepth {
		w.r.all = true
		return
	}
	switch u := t.Underlying().(type) {
	case *types.Pointer:
		w.addType(u.Elem(), depth)
	case *types.Struct:
		for i := 0; i < u.NumFields(); i++ {
			w.addVar(u.Field(i), depth+1)
		}
	case *types.Slice:
		w.addType(u.Elem(), depth+1)
	case *types.Array:
		w.addType(u.Elem(), depth+1)
	case *types.Map:
		w.addType(u.Elem(), depth+1)
	case *types.Chan:
		w.addType(u.Elem(), depth+1)
	}
}

// inputVars are a function's parameters (receiver included) and the
// variables it captures.
func (p *Program) inputVars(f *Func) []*types.Var {
	var out []*types.Var
	if f.sig != nil {
		out = append(out, sigParams(f.sig, true)...)
	}
	return append(out, p.flow.captured[f]...)
}

// EntryReach is what a goroutine with these frames (leaf first) was
// started with: what its entry function's parameters and captured
// variables lead to. The entry is the outermost frame read (a go
// statement's wrapper is not read: the function it calls is); one that
// (*sync.WaitGroup).Go started was also given the WaitGroups of the Go
// calls that may start it. One shown only in its go statement's wrapper
// is entering the functions that statement may call. ok is false when
// the entry's function is not read.
func (p *Program) EntryReach(frames []Frame) (Reach, bool) {
	wgGo := false
	var entry *Func
	for i := len(frames) - 1; i >= 0 && entry == nil; i-- {
		fr := frames[i]
		if Machinery(fr.Function) || gosym.Wrapper(fr.Function) {
			wgGo = wgGo || fr.Function == wgGoFunc
			continue
		}
		if entry, _ = p.FuncAt(fr.Function, fr.File, fr.Line); entry == nil {
			return Reach{}, false
		}
	}
	var inputs []*types.Var
	switch _, e, _, unstarted := p.unstartedGo(frames); {
	case entry != nil:
		inputs = p.inputVars(entry)
	case unstarted && !e.call.unknown && len(e.call.callees) > 0:
		for _, g := range e.call.callees {
			inputs = append(inputs, p.inputVars(g)...)
		}
	default:
		return Reach{}, false
	}
	w := p.newReachWalk(false)
	for _, v := range inputs {
		w.addVar(v, 0)
	}
	if wgGo && entry != nil {
		for _, e := range p.goDones()[entry] { // the WaitGroup whose Go started it
			w.addClass(e.obj, 0)
		}
	}
	return w.r, true
}

// PtrParam is a parameter a frame prints as one pointer word to a named
// struct: the root through which the frame holds what that struct leads
// to.
type PtrParam struct {
	// Word is its position among the frame's printed argument words;
	// Type names the struct.
	Word  int
	Type  string
	reach Reach
}

// Reaches reports whether what the parameter points to leads to an
// object of class c.
func (pp PtrParam) Reaches(c Class) bool { return pp.reach.Has(c) }

// PtrParams lists the frame's parameters (receiver first) printed as one
// pointer word to a named struct, up to the first parameter whose
// printed words the types do not fix (a struct or array, a type
// parameter); none for a generic function (its first word is its
// dictionary) or one not read.
func (p *Program) PtrParams(fr Frame) []PtrParam {
	f, _ := p.FuncAt(fr.Function, fr.File, fr.Line)
	if f == nil {
		return nil
	}
	var out []PtrParam
	for _, pw := range printedParams(f) {
		if ptr, ok := pw.v.Type().(*types.Pointer); ok {
			if named, ok := ptr.Elem().(*types.Named); ok {
				if _, ok := named.Underlying().(*types.Struct); ok {
					out = append(out, PtrParam{Word: pw.word, Type: types.TypeString(named, nil), reach: p.reachOf([]*types.Var{pw.v})})
				}
			}
		}
	}
	return out
}

// paramAt is a parameter and the position of its first word among the
// argument words a traceback prints for a frame.
type paramAt struct {
	v    *types.Var
	word int
}

// printedParams lists f's parameters (receiver first) with their word
// positions, up to the first whose printed words the types do not fix (a
// struct or array, a type parameter); none for a generic function (its
// first word is its dictionary) or one without a signature.
func printedParams(f *Func) []paramAt {
	if f.sig == nil || f.sig.TypeParams().Len() > 0 || f.sig.RecvTypeParams().Len() > 0 {
		return nil
	}
	var out []paramAt
	word := 0
	for _, v := range sigParams(f.sig, true) {
		n := printedWords(v.Type())
		if n == 0 {
			break
		}
		out = append(out, paramAt{v, word})
		word += n
	}
	return out
}

// printedWords is how many argument words a traceback prints for a
// value of type t: 1 for a pointer, map, channel, function or scalar, 2
// for a string, interface or complex128, 3 for a slice; 0 when the
// types do not fix it (a struct, array or type parameter).
func printedWords(t types.Type) int {
	switch u := t.Underlying().(type) {
	case *types.Pointer, *types.Map, *types.Chan, *types.Signature:
		return 1
	case *types.Interface:
		return 2
	case *types.Slice:
		return 3
	case *types.Basic:
		switch {
		case u.Kind() == types.String:
			return 2
		case u.Kind() == types.Complex128:
			return 2
		case u.Info()&(types.IsNumeric|types.IsBoolean) != 0, u.Kind() == types.UnsafePointer:
			return 1
		}
	}
	return 0
}

// addScalar adds the fields a value of a scalar type holds (a lock held
// by value is an object of its own), at any depth: they lead nowhere
// else, and a type cannot hold itself by value.
func (w *reachWalk) addScalar(t types.Type) {
	switch u := t.Underlying().(type) {
	case *types.Array:
		w.addScalar(u.Elem())
	case *types.Struct:
		for i := 0; i < u.NumFields(); i++ {
			f := u.Field(i)
			if n, ok := w.p.flow.vars[f.Origin()]; ok { // a field no code uses is no object
				w.r.set[w.p.flow.cl.find(n)] = true
			}
			w.addScalar(f.Type())
		}
	}
	if !w.unbounded && len(w.r.set) >= maxReach {
		w.r.all = true
	}
}

// scalar reports a type whose values hold no reference (no pointer,
// channel, map, slice, function or interface, in any field or element):
// a value of it leads to no object but its own storage. Strings count
// as scalar: the bytes they point to are immutable and hold nothing.
func scalar(t types.Type) bool {
	return scalarSeen(t, map[types.Type]bool{})
}

func scalarSeen(t types.Type, seen map[types.Type]bool) bool {
	if seen[t] {
		return true // a cycle through values only is no reference
	}
	seen[t] = true
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Kind() != types.UnsafePointer
	case *types.Array:
		return scalarSeen(u.Elem(), seen)
	case *types.Struct:
		for i := 0; i < u.NumFields(); i++ {
			if !scalarSeen(u.Field(i).Type(), seen) {
				return false
			}
		}
		return true
	}
	return false
}
