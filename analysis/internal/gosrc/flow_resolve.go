package gosrc

import (
	"go/ast"
	"go/types"
)

// resolve connects the calls through function values and interfaces to
// the functions their classes hold, again until no call gains a callee
// (each connection can join classes and so give other calls more), and
// records the calls of cancel functions as operations.
func (fl *flow) resolve() {
	for changed := true; changed; {
		changed = false
		for _, s := range fl.sites {
			if s.dyn == none {
				continue
			}
			v := fl.version(s.dyn)
			if v == s.version {
				continue
			}
			s.version = v
			for _, d := range fl.dynCallees(s) {
				if !s.done[d.f] {
					fl.connectRecv(s, d.f, d.recv)
					changed = true
				}
			}
		}
	}
	for _, s := range fl.sites {
		if s.dyn == none || s.caller == nil {
			if s.dyn == none && s.static == nil && s.decl == nil {
				s.unknown = true
			}
			continue
		}
		d := fl.cl.data(s.dyn)
		if d.flags&fCancel != 0 {
			s.caller.events = append(s.caller.events, event{pos: s.pos, end: s.end, op: OpCancel, obj: fl.cl.find(s.dyn)})
		}
		if len(fl.dynCallees(s)) == 0 || len(d.decls) > 0 || d.flags&fOpaque != 0 {
			s.unknown = d.flags&fCancel == 0
		}
		if s.unknown {
			for _, r := range s.results {
				fl.cl.data(fl.cl.pts(r)).flags |= fOpaque // made by code not read
			}
		}
	}
}

// version identifies the state of a class for dispatch: its root and
// how many functions and dynamic types it holds (they only grow).
// Embedded interfaces' classes are not counted: a call through one is
// looked at again when its own class changes.
func (fl *flow) version(n node) [3]int {
	r := fl.cl.find(n)
	d := fl.cl.data(r)
	return [3]int{int(r) + 1, len(d.funcs), len(d.dyn)}
}

// dispatch is a function a call through a value may call, and the
// class its receiver is (none: the call's own).
type dispatch struct {
	f    *Func
	recv node
}

// dynCallees are the functions read that a call through a value may
// call: the value's functions, or the named method of its dynamic types
// (through the interfaces those embed, to their own dynamic types).
func (fl *flow) dynCallees(s *callSite) []dispatch {
	d := fl.cl.data(s.dyn)
	if s.method == "" {
		out := make([]dispatch, len(d.funcs))
		for i, f := range d.funcs {
			out[i] = dispatch{f: f, recv: none}
		}
		return out
	}
	return fl.methodsOf(s.dyn, s.method, map[node]bool{}, nil)
}

// methodsOf finds method name of the dynamic types of class n, and,
// where a dynamic type's method is promoted from an embedded interface
// field, of that field's dynamic types; each class once (seen).
func (fl *flow) methodsOf(n node, name string, seen map[node]bool, out []dispatch) []dispatch {
	n = fl.cl.find(n)
	if seen[n] {
		return out
	}
	seen[n] = true
	for _, t := range fl.cl.data(n).dyn {
		obj, index := fl.lookupMethod(t, name)
		m, ok := obj.(*types.Func)
		if !ok {
			continue
		}
		if f := fl.p.funcs.byObj[m.Origin()]; f != nil {
			out = append(out, dispatch{f: f, recv: none})
			continue
		}
		if sig, ok := m.Type().(*types.Signature); ok && sig.Recv() != nil && isInterface(sig.Recv().Type()) {
			if field := embeddedField(t, index); field != nil {
				out = fl.methodsOf(fl.cl.pts(fl.varNode(field)), name, seen, out)
			}
		}
	}
	return out
}

// methodKey is a method looked up on a type: a named type (or a pointer
// to one: the same pointer type may be several *types.Pointer values).
type methodKey struct {
	t    types.Type
	ptr  bool
	name string
}

// methodHit is a memoised lookup.
type methodHit struct {
	obj   types.Object
	index []int
}

// lookupMethod is lookupMethod memoised.
func (fl *flow) lookupMethod(t types.Type, name string) (types.Object, []int) {
	k := methodKey{t: t, name: name}
	if p, ok := t.(*types.Pointer); ok {
		k.t, k.ptr = p.Elem(), true
	}
	if _, named := k.t.(*types.Named); !named {
		return lookupMethod(t, name)
	}
	if h, ok := fl.methods[k]; ok {
		return h.obj, h.index
	}
	obj, index := lookupMethod(t, name)
	fl.methods[k] = methodHit{obj, index}
	return obj, index
}

// lookupMethod finds a method of t by name, exported or not.
func lookupMethod(t types.Type, name string) (types.Object, []int) {
	obj, index, _ := types.LookupFieldOrMethod(t, true, nil, name)
	if obj == nil {
		if n, ok := deref(t).(*types.Named); ok && n.Obj().Pkg() != nil {
			obj, index, _ = types.LookupFieldOrMethod(t, true, n.Obj().Pkg(), name)
		}
	}
	return obj, index
}

func deref(t types.Type) types.Type {
	if p, ok := t.(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

// embeddedField is the last embedded field a method selection's index
// path goes through (the interface the method is promoted from).
func embeddedField(t types.Type, index []int) *types.Var {
	var f *types.Var
	for _, i := range index[:len(index)-1] {
		st := structOf(t)
		if st == nil || i >= st.NumFields() {
			return nil
		}
		f = st.Field(i)
		t = f.Type()
	}
	return f
}

// markEscapes marks the classes an instance of which may be reached
// from more than the goroutines that made it and those they handed it
// to: what a package-level variable leads to (through pointers, fields
// and containers), what was given to or made by code not read, and what
// went into a container or a channel (its receivers need not descend from
// its maker), with all they lead to.
func (fl *flow) markEscapes() {
	w := fl.p.newReachWalk(true)
	for v, n := range fl.vars {
		if fl.cl.data(n).flags&(fGlobal|fOpaque|fElem) != 0 {
			w.addVar(v, 0)
		}
	}
	for n := range fl.cl.parent {
		if d := fl.cl.info[n]; d != nil && fl.cl.find(node(n)) == node(n) && d.flags&(fOpaque|fElem) != 0 {
			w.addClass(node(n), 0)
		}
	}
	fl.escaped = make([]bool, len(fl.cl.parent))
	for n := range w.r.set {
		fl.escaped[n] = true
	}
	fl.allEscape = w.r.all
}

// Escapes reports whether an object of class n may be reached from more
// than the frames of the goroutines it was passed to.
func (fl *flow) Escapes(n node) bool {
	if n == none {
		return true
	}
	r := fl.cl.find(n)
	return fl.allEscape || int(r) >= len(fl.escaped) || fl.escaped[r]
}

// capturedVars lists the variables a literal uses that are declared
// outside it and are not package-level: the ones it shares with the
// function it is written in.
func capturedVars(f *Func) []*types.Var {
	info := f.pkg.info
	lo, hi := f.lit.Pos(), f.lit.End()
	seen := map[*types.Var]bool{}
	var out []*types.Var
	ast.Inspect(f.lit.Body, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok {
			return true
		}
		v, ok := info.Uses[id].(*types.Var)
		if !ok || v.IsField() || seen[v] || v.Pos() >= lo && v.Pos() < hi {
			return true
		}
		if v.Pkg() != nil && v.Parent() == v.Pkg().Scope() {
			return true
		}
		seen[v] = true
		out = append(out, v)
		return true
	})
	return out
}

// holdersOf maps each class to the variables of the classes pointing to
// it (made once).
func (fl *flow) holdersOf() map[node][]*types.Var {
	if fl.holders != nil {
		return fl.holders
	}
	fl.holders = map[node][]*types.Var{}
	for _, d := range fl.cl.info {
		if d == nil || d.pts == none || len(d.vars) == 0 {
			continue
		}
		r := fl.cl.find(d.pts)
		if len(fl.holders[r]) < maxVars {
			fl.holders[r] = append(fl.holders[r], d.vars...)
		}
	}
	return fl.holders
}
