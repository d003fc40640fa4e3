package gosrc

import (
	"go/ast"
	"go/token"
	"go/types"
)

// Places. A sync operation's object is often a field held by value in a
// struct a parameter points to (r.mu.Lock(), r a *T): its address is the
// pointer's value plus the field's offset, and a traceback prints that
// pointer among the frame's arguments. When the parameter is never
// assigned nor has its address taken, the printed word (its value at the
// call) is its value at every statement, so the dump says which object
// each such operation acts on: two goroutines operating through
// different addresses operate on different objects, whatever the class.

// place is where an operation's object lies: off bytes into what root
// points to (ptr) or into root's own storage.
type place struct {
	root *types.Var
	off  int64
	ptr  bool
}

// placeOf is the place of the object x denotes, reached further through
// the embedded fields embed (a promoted method's path); ok is false
// when the path leaves the root's pointer or the sizes are not known.
func (fl *flow) placeOf(x ast.Expr, embed []int) (place, bool) {
	pl, t, ok := fl.placeExpr(ast.Unparen(x))
	if _, ptr := under(t).(*types.Pointer); !ok || ptr {
		return place{}, false // the object is behind a pointer the frames do not print
	}
	return fl.fieldsAt(pl, t, embed)
}

// placeExpr walks a variable and the field selections on it.
func (fl *flow) placeExpr(x ast.Expr) (place, types.Type, bool) {
	switch e := x.(type) {
	case *ast.Ident:
		v, ok := fl.info.Uses[e].(*types.Var)
		if !ok || v.IsField() || v.Pkg() != nil && v.Parent() == v.Pkg().Scope() {
			return place{}, nil, false
		}
		if p, ok := under(v.Type()).(*types.Pointer); ok {
			return place{root: v, ptr: true}, p.Elem(), true
		}
		return place{root: v}, v.Type(), true
	case *ast.SelectorExpr:
		sel := fl.info.Selections[e]
		if sel == nil || sel.Kind() != types.FieldVal {
			return place{}, nil, false
		}
		pl, t, ok := fl.placeExpr(ast.Unparen(e.X))
		if !ok {
			return place{}, nil, false
		}
		pl, ok = fl.fieldsAt(pl, t, sel.Index())
		if !ok {
			return place{}, nil, false
		}
		return pl, sel.Type(), true
	}
	return place{}, nil, false
}

// fieldsAt adds the offsets of a path of field indices through structs
// held by value, starting in a struct of type t.
func (fl *flow) fieldsAt(pl place, t types.Type, path []int) (place, bool) {
	sizes := fl.p.sizes()
	if sizes == nil {
		return place{}, false
	}
	for _, i := range path {
		st, ok := under(t).(*types.Struct)
		if !ok || i >= st.NumFields() {
			return place{}, false
		}
		fields := make([]*types.Var, st.NumFields())
		for j := range fields {
			fields[j] = st.Field(j)
			if !validType(fields[j].Type()) {
				return place{}, false
			}
		}
		pl.off += sizes.Offsetsof(fields)[i]
		t = fields[i].Type()
	}
	return pl, true
}

// validType reports a type the checker fully knows (no invalid part a
// size could rest on).
func validType(t types.Type) bool {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Kind() != types.Invalid
	case *types.Array:
		return validType(u.Elem())
	case *types.Struct:
		for i := 0; i < u.NumFields(); i++ {
			if !validType(u.Field(i).Type()) {
				return false
			}
		}
	}
	return true
}

// sizes are the target's type sizes; nil for an unknown architecture.
func (p *Program) sizes() types.Sizes {
	return types.SizesFor("gc", p.cfg.GOARCH)
}

// fixed reports a variable the program never assigns after its
// definition and never takes the address of: it holds one value.
func (p *Program) fixed(v *types.Var) bool { return !p.flow.mutated[v] }

// mutatedVars lists every variable some statement assigns (after its
// definition), increments, ranges into or takes the address of, and the
// fields and structs written (path.go).
func (p *Program) mutatedVars() (map[*types.Var]bool, fieldWrites) {
	out := map[*types.Var]bool{}
	fw := fieldWrites{fields: map[*types.Var]bool{}}
	for _, f := range p.funcs.all {
		if f.parent != nil {
			continue // the walk of the function it is written in covers it
		}
		info := f.pkg.info
		use := func(x ast.Expr) {
			if id, ok := ast.Unparen(x).(*ast.Ident); ok {
				if v, ok := info.Uses[id].(*types.Var); ok {
					out[v] = true
				}
			}
		}
		ast.Inspect(f.body(), func(n ast.Node) bool {
			fw.noteStmt(info, n)
			switch x := n.(type) {
			case *ast.AssignStmt:
				for _, l := range x.Lhs {
					use(l) // a := redeclaring an existing variable lists it in Uses
				}
			case *ast.IncDecStmt:
				use(x.X)
			case *ast.RangeStmt:
				if x.Tok == token.ASSIGN {
					use(x.Key)
					use(x.Value)
				}
			case *ast.UnaryExpr:
				if x.Op == token.AND {
					use(x.X)
				}
			}
			return true
		})
	}
	return out, fw
}

// paramWord is the position of parameter v among the argument words a
// traceback prints for a frame of f; ok is false when v is not one of
// the parameters whose words are known (see printedParams).
func (p *Program) paramWord(f *Func, v *types.Var) (int, bool) {
	for _, pw := range printedParams(f) {
		if pw.v == v {
			return pw.word, true
		}
	}
	return 0, false
}

// where says which object a release e of frame i (running f) acts on:
// one its printed pointer parameter places. ok is false when the code
// does not say.
func (p *Program) where(f *Func, e event, i int) (Where, bool) {
	at := e.at
	if e.call != nil || at.root == nil || !at.ptr || !p.fixed(at.root) {
		return Where{}, false
	}
	w, ok := p.paramWord(f, at.root)
	return Where{Frame: i, Word: w, Offset: at.off}, ok
}
