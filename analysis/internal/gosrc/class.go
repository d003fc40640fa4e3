package gosrc

import (
	"fmt"
	"go/types"
	"path/filepath"
	"sort"
)

// Class is an abstract object: every object one class of storage may
// hold (all channels one make can make and every variable they flow to,
// every instance of a struct field).
type Class struct {
	p *Program
	n node
}

// class returns n's class.
func (p *Program) class(n node) Class {
	if n == none || p.flow == nil {
		return Class{}
	}
	return Class{p: p, n: p.flow.cl.find(n)}
}

// Valid reports a class the program read.
func (c Class) Valid() bool { return c.p != nil }

// ID identifies the class within its program.
func (c Class) ID() int32 { return c.n }

func (c Class) info() *cinfo { return c.p.flow.cl.data(c.n) }

func (c Class) has(f cflag) bool { return c.Valid() && c.info().flags&f != 0 }

// Escapes reports whether an object of the class may be reached from
// more than the frames of the goroutines it was passed to: a
// package-level variable, a struct field, a container, a channel, or
// code not read holds it (or holds what points to it).
func (c Class) Escapes() bool { return !c.Valid() || c.p.flow.Escapes(c.n) }

// Timer reports a timer's or ticker's channel: it fires by itself.
func (c Class) Timer() bool { return c.has(fTimer) }

// Signal reports a channel signal.Notify sends on when a signal comes.
func (c Class) Signal() bool { return c.has(fSignal) }

// Opaque reports an object given to, or made by, code not read.
func (c Class) Opaque() bool { return c.has(fOpaque) }

// Globals names the package-level variables of the class ("main.ch").
func (c Class) Globals() []string {
	if !c.Valid() {
		return nil
	}
	var out []string
	for _, v := range c.holders() {
		if v.Pkg() != nil && v.Parent() == v.Pkg().Scope() {
			out = append(out, v.Pkg().Path()+"."+v.Name())
		}
	}
	sort.Strings(out)
	return out
}

// holders lists the named storage of the class and of the classes
// pointing to it (a channel's variables hold its values).
func (c Class) holders() []*types.Var {
	return append(append([]*types.Var(nil), c.info().vars...), c.p.flow.holdersOf()[c.n]...)
}

// Allocs says where objects of the class are made ("make(chan) at
// main.go:12"), at most a few.
func (c Class) Allocs() []string {
	if !c.Valid() {
		return nil
	}
	var out []string
	for _, a := range c.info().allocs {
		pos := c.p.fset.Position(a.Pos)
		out = append(out, fmt.Sprintf("%s at %s:%d", a.Kind, filepath.Base(pos.Filename), pos.Line))
	}
	return out
}

// Names lists the variables of the class ("ch", "s.mu"), for texts.
func (c Class) Names() []string {
	if !c.Valid() {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, v := range c.holders() {
		if n := varName(v); n != "" && n != "_" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// varName names a variable for texts: a field as T.f, a package-level
// variable as pkg.v, a local by its name.
func varName(v *types.Var) string {
	switch {
	case v.IsField():
		return fieldOwner(v) + v.Name()
	case v.Pkg() != nil && v.Parent() == v.Pkg().Scope():
		return v.Pkg().Path() + "." + v.Name()
	}
	return v.Name()
}

// fieldOwner is "T." for a field of named struct T, "" when unknown.
func fieldOwner(v *types.Var) string {
	if v.Pkg() == nil {
		return ""
	}
	for _, name := range v.Pkg().Scope().Names() {
		tn, ok := v.Pkg().Scope().Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		if st, ok := tn.Type().Underlying().(*types.Struct); ok {
			for i := 0; i < st.NumFields(); i++ {
				if st.Field(i) == v.Origin() {
					return name + "."
				}
			}
		}
	}
	return ""
}
