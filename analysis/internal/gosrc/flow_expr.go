package gosrc

import (
	"go/ast"
	"go/token"
	"go/types"
)

// ref evaluates an expression (walking the calls and operations in it)
// and returns the class of what its value points to: the channel, the
// object a pointer addresses, the functions a func value may be. none
// for values that point to nothing.
func (fl *flow) ref(e ast.Expr) node {
	switch x := e.(type) {
	case nil:
		return none
	case *ast.ParenExpr:
		return fl.ref(x.X)
	case *ast.Ident:
		return fl.identRef(x)
	case *ast.SelectorExpr:
		return fl.selectorRef(x)
	case *ast.StarExpr:
		return fl.cl.pts(fl.ref(x.X))
	case *ast.UnaryExpr:
		switch x.Op {
		case token.AND:
			return fl.loc(x.X)
		case token.ARROW:
			return fl.recv(x, false)
		}
		fl.ref(x.X)
		return none
	case *ast.IndexExpr:
		if fl.isInstance(x.X) {
			return fl.ref(x.X)
		}
		return fl.cl.pts(fl.loc(x))
	case *ast.IndexListExpr:
		return fl.ref(x.X)
	case *ast.SliceExpr:
		fl.ref(x.Low)
		fl.ref(x.High)
		fl.ref(x.Max)
		if _, ok := under(fl.info.TypeOf(x.X)).(*types.Array); ok {
			return fl.loc(x.X)
		}
		return fl.ref(x.X)
	case *ast.CallExpr:
		if rs := fl.call(x, callPlain); len(rs) > 0 {
			return rs[0]
		}
		return none
	case *ast.CompositeLit:
		return fl.composite(x)
	case *ast.FuncLit:
		return fl.litValue(x)
	case *ast.TypeAssertExpr:
		return fl.ref(x.X)
	case *ast.BinaryExpr:
		fl.ref(x.X)
		fl.ref(x.Y)
	case *ast.KeyValueExpr:
		fl.ref(x.Key)
		return fl.ref(x.Value)
	}
	return none
}

// isInstance reports a generic function's instantiation (f[int]).
func (fl *flow) isInstance(e ast.Expr) bool {
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		_, ok := fl.info.Uses[x].(*types.Func)
		return ok
	case *ast.SelectorExpr:
		_, ok := fl.info.Uses[x.Sel].(*types.Func)
		return ok
	}
	return false
}

// identRef is the value of a name: a variable's, or a function's.
func (fl *flow) identRef(x *ast.Ident) node {
	switch o := fl.info.Uses[x].(type) {
	case *types.Var:
		return fl.cl.pts(fl.varNode(o))
	case *types.Func:
		return fl.funcValue(o)
	}
	if v, ok := fl.info.Defs[x].(*types.Var); ok {
		return fl.cl.pts(fl.varNode(v))
	}
	return none
}

// selectorRef is the value of x.f: a field's, a method value, or a
// package's name.
func (fl *flow) selectorRef(x *ast.SelectorExpr) node {
	sel := fl.info.Selections[x]
	if sel == nil {
		return fl.identRef(x.Sel) // pkg.Name
	}
	switch sel.Kind() {
	case types.FieldVal:
		return fl.cl.pts(fl.loc(x))
	case types.MethodVal:
		m := sel.Obj().(*types.Func)
		r := fl.recvRef(x, sel)
		if isInterface(sel.Recv()) {
			return r // a bound interface method: dispatched on r's types when called
		}
		v := fl.funcValue(m)
		if f := fl.p.funcs.byObj[m.Origin()]; f != nil && f.sig != nil && f.sig.Recv() != nil {
			fl.cl.join(fl.cl.pts(fl.varNode(f.sig.Recv())), r)
		}
		return v
	}
	return fl.funcValue(sel.Obj().(*types.Func)) // T.M
}

// funcValue is the class of a declared function's value.
func (fl *flow) funcValue(fn *types.Func) node {
	if f := fl.p.funcs.byObj[fn.Origin()]; f != nil {
		return fl.funcClass(f)
	}
	fn = fn.Origin()
	if n, ok := fl.dobj[fn]; ok {
		return fl.cl.find(n)
	}
	n := fl.cl.newNode()
	fl.dobj[fn] = n
	fl.cl.data(n).decls = []*types.Func{fn}
	return n
}

// litValue is the class of a function literal's value.
func (fl *flow) litValue(x *ast.FuncLit) node {
	if f := fl.p.funcs.byLit[x]; f != nil {
		return fl.funcClass(f)
	}
	return none
}

// funcClass is the class holding function f's value.
func (fl *flow) funcClass(f *Func) node {
	if n, ok := fl.fobj[f]; ok {
		return fl.cl.find(n)
	}
	n := fl.cl.newNode()
	fl.fobj[f] = n
	fl.cl.data(n).funcs = []*Func{f}
	return n
}

// loc returns the class of the storage an addressable expression names
// (evaluating what it must to find it); a fresh class for other
// expressions.
func (fl *flow) loc(e ast.Expr) node {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return fl.loc(x.X)
	case *ast.Ident:
		if n := fl.defNode(x); n != none {
			return n
		}
	case *ast.SelectorExpr:
		sel := fl.info.Selections[x]
		if sel == nil {
			if v, ok := fl.info.Uses[x.Sel].(*types.Var); ok {
				return fl.varNode(v) // pkg.V
			}
			break
		}
		if sel.Kind() == types.FieldVal {
			fl.ref(x.X)
			return fl.varNode(sel.Obj().(*types.Var))
		}
	case *ast.StarExpr:
		return fl.ref(x.X)
	case *ast.IndexExpr:
		fl.ref(x.Index)
		switch under(fl.info.TypeOf(x.X)).(type) {
		case *types.Array:
			return fl.cl.elem(fl.loc(x.X))
		case *types.Basic:
			fl.ref(x.X)
			return fl.cl.newNode()
		}
		return fl.cl.elem(fl.ref(x.X))
	case *ast.CompositeLit:
		return fl.composite(x)
	}
	fl.ref(e)
	return fl.cl.newNode()
}

// composite evaluates a composite literal into a fresh object: a
// struct's fields, a slice's, array's or map's elements receive the
// values written.
func (fl *flow) composite(x *ast.CompositeLit) node {
	obj := fl.alloc(x.Lbrace, "composite")
	t := fl.info.TypeOf(x)
	st, _ := under(t).(*types.Struct)
	if p, ok := under(t).(*types.Pointer); ok && st == nil {
		st, _ = under(p.Elem()).(*types.Struct) // &T{} elided in a slice literal
	}
	for i, el := range x.Elts {
		key, val := ast.Expr(nil), el
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			key, val = kv.Key, kv.Value
		}
		if st != nil {
			var f *types.Var
			if id, ok := key.(*ast.Ident); ok {
				f, _ = fl.info.Uses[id].(*types.Var)
			} else if key == nil && i < st.NumFields() {
				f = st.Field(i)
			}
			fl.assign(fl.varNode(f), fieldType(f), val)
			continue
		}
		if key != nil {
			fl.cl.join(fl.cl.pts(fl.cl.elem(obj)), fl.ref(key))
		}
		fl.assign(fl.cl.elem(obj), elemType(t), val)
	}
	return obj
}

func fieldType(f *types.Var) types.Type {
	if f == nil {
		return nil
	}
	return f.Type()
}

// elemType is the element type of a container type.
func elemType(t types.Type) types.Type {
	switch u := under(t).(type) {
	case *types.Slice:
		return u.Elem()
	case *types.Array:
		return u.Elem()
	case *types.Map:
		return u.Elem()
	case *types.Chan:
		return u.Elem()
	case *types.Pointer:
		return elemType(u.Elem())
	}
	return nil
}

// recvRef is the class of the receiver a method call passes: the object
// x addresses, through the embedded fields the selection goes through.
func (fl *flow) recvRef(x *ast.SelectorExpr, sel *types.Selection) node {
	idx := sel.Index()
	var obj node
	t := fl.info.TypeOf(x.X)
	if _, ptr := under(t).(*types.Pointer); ptr || isInterface(t) {
		obj = fl.ref(x.X)
	} else {
		obj = fl.loc(x.X)
	}
	for _, i := range idx[:len(idx)-1] {
		st := structOf(t)
		if st == nil || i >= st.NumFields() {
			return obj
		}
		f := st.Field(i)
		obj = fl.varNode(f)
		t = f.Type()
		if _, ptr := under(t).(*types.Pointer); ptr || isInterface(t) {
			obj = fl.cl.pts(obj)
		}
	}
	return obj
}

// structOf is the struct a type is, or points to.
func structOf(t types.Type) *types.Struct {
	if p, ok := under(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	st, _ := under(t).(*types.Struct)
	return st
}
