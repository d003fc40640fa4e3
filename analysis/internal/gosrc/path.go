package gosrc

import (
	"go/ast"
	"go/token"
	"go/types"
)

// Access paths. An operand written as a variable and the fields selected
// from it (q.cond, rq.queue, through pointers and interfaces) names one
// object for as long as the variable holds one value and no statement
// writes those fields after the struct holding them is made: the fields
// are then set once, by the composite literal that made it. Such paths
// say which object a call acts on from what the caller passes it (see
// origin.go).

// accessPath is an operand as a variable (root) and the struct fields
// selected from it in turn; root is nil when the operand is not one.
type accessPath struct {
	root   *types.Var
	fields []*types.Var
}

// maxPathFields bounds the fields of a path followed.
const maxPathFields = 8

// pathOf reads x as an access path.
func (fl *flow) pathOf(x ast.Expr) accessPath {
	switch e := ast.Unparen(x).(type) {
	case *ast.Ident:
		v, ok := fl.info.Uses[e].(*types.Var)
		if !ok || v.IsField() || v.Pkg() != nil && v.Parent() == v.Pkg().Scope() {
			return accessPath{}
		}
		return accessPath{root: v}
	case *ast.StarExpr:
		return fl.pathOf(e.X) // *p is the object p points to
	case *ast.UnaryExpr:
		if e.Op == token.AND {
			return fl.pathOf(e.X) // &x.f: the object x.f
		}
	case *ast.SelectorExpr:
		sel := fl.info.Selections[e]
		if sel == nil || sel.Kind() != types.FieldVal {
			return accessPath{}
		}
		return fl.pathOf(e.X).through(fl.info.TypeOf(e.X), sel.Index())
	}
	return accessPath{}
}

// through extends a path (of a value of type t) by the fields at the
// indices path, each in the struct the one before leads to.
func (a accessPath) through(t types.Type, path []int) accessPath {
	if a.root == nil || t == nil {
		return accessPath{}
	}
	fields := append([]*types.Var(nil), a.fields...)
	for _, i := range path {
		if p, ok := under(t).(*types.Pointer); ok {
			t = p.Elem()
		}
		st, ok := under(t).(*types.Struct)
		if !ok || i >= st.NumFields() || len(fields) >= maxPathFields {
			return accessPath{}
		}
		fields = append(fields, st.Field(i).Origin())
		t = st.Field(i).Type()
	}
	return accessPath{root: a.root, fields: fields}
}

// fieldWrites is what the program's statements write besides variables:
// the fields some statement writes after their struct was made, or
// takes the address of, and the struct types some statement overwrites
// whole through a pointer or an element (*p = v, s[i] = v, &s[i]).
type fieldWrites struct {
	fields map[*types.Var]bool
	whole  []types.Type
}

// note records a write to the storage lhs denotes.
func (fw *fieldWrites) note(info *types.Info, lhs ast.Expr) {
	switch x := ast.Unparen(lhs).(type) {
	case *ast.SelectorExpr:
		if sel := info.Selections[x]; sel != nil && sel.Kind() == types.FieldVal {
			if f, ok := sel.Obj().(*types.Var); ok {
				fw.fields[f.Origin()] = true
			}
		}
	case *ast.StarExpr, *ast.IndexExpr:
	default:
		return
	}
	if t := info.TypeOf(lhs); t != nil {
		if _, ok := under(t).(*types.Struct); ok {
			fw.whole = append(fw.whole, t)
		}
	}
}

// noteStmt records the writes of one node of a body.
func (fw *fieldWrites) noteStmt(info *types.Info, n ast.Node) {
	switch x := n.(type) {
	case *ast.AssignStmt:
		if x.Tok != token.DEFINE {
			for _, l := range x.Lhs {
				fw.note(info, l)
			}
		}
	case *ast.IncDecStmt:
		fw.note(info, x.X)
	case *ast.RangeStmt:
		if x.Tok == token.ASSIGN {
			for _, e := range []ast.Expr{x.Key, x.Value} {
				if e != nil {
					fw.note(info, e)
				}
			}
		}
	case *ast.UnaryExpr:
		if x.Op == token.AND {
			fw.note(info, x.X) // the address taken: written through it, maybe
		}
	}
}

// stableField reports a struct field no statement writes after its
// struct is made: declared in a package whose source is read, where
// only that package can write it (unexported, or package main), never
// assigned, incremented, ranged into or addressed, in no struct that is
// overwritten whole.
func (p *Program) stableField(f *types.Var) bool {
	fw := &p.flow.writes
	if fw.fields[f] || f.Pkg() == nil {
		return false
	}
	k := p.pkgs[f.Pkg().Path()]
	if k == nil || !k.bodies || f.Exported() && f.Pkg().Name() != "main" {
		return false
	}
	for _, t := range fw.whole {
		if st, ok := under(t).(*types.Struct); ok && hasField(st, f) {
			return false
		}
	}
	return true
}

// hasField reports a struct holding field f, itself or in a struct it
// holds by value.
func hasField(st *types.Struct, f *types.Var) bool {
	for i := 0; i < st.NumFields(); i++ {
		fi := st.Field(i)
		if fi.Origin() == f {
			return true
		}
		if inner, ok := under(fi.Type()).(*types.Struct); ok && hasField(inner, f) {
			return true
		}
	}
	return false
}

// stablePath reports a path whose fields are all stable.
func (p *Program) stablePath(fields []*types.Var) bool {
	for _, f := range fields {
		if !p.stableField(f) {
			return false
		}
	}
	return true
}
