package gosrc

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"
)

// flow is the unification of every value flow in the program's bodies
// (Steensgaard's analysis over the typed syntax): storage locations and
// the objects values point to, by class.
type flow struct {
	p     *Program
	cl    classes
	vars  map[*types.Var]node
	fobj  map[*Func]node       // the class of each function's value
	dobj  map[*types.Func]node // the same for declarations not read
	sites []*callSite
	// callbacks are functions passed to code not read: it may call them
	// at any time, on any goroutine (a timer's, a server's).
	callbacks []*Func
	// timers are the functions handed to time.AfterFunc and
	// context.AfterFunc, with where: the runtime runs each on a goroutine
	// of its own when its timer fires or its context is done.
	timers []timerCallback
	// captured lists, per literal, the variables it captures.
	captured map[*Func][]*types.Var
	escaped  []bool // by class root, after resolve
	// mutated are the variables some statement assigns or takes the
	// address of (place.go).
	mutated map[*types.Var]bool
	// writes are the fields and structs some statement writes (path.go).
	writes fieldWrites
	// allEscape: the walk from the escaping roots hit its bounds.
	allEscape bool
	holders   map[node][]*types.Var
	// dones pairs a context's class with its Done channel's.
	dones [][2]node
	// methods memoises method lookups by type and name.
	methods map[methodKey]methodHit

	cur  *Func
	info *types.Info
	pkg  *types.Package
}

// newFlow walks every body read, unifies, and resolves calls through
// function values and interfaces.
func newFlow(p *Program) *flow {
	fl := &flow{p: p, vars: map[*types.Var]node{}, fobj: map[*Func]node{}, dobj: map[*types.Func]node{},
		captured: map[*Func][]*types.Var{}, methods: map[methodKey]methodHit{}}
	p.flow = fl
	fl.seedTime()
	for _, k := range p.order {
		if k.info == nil {
			continue
		}
		fl.info, fl.pkg, fl.cur = k.info, k.types, nil
		for _, af := range k.files {
			fl.globals(af)
		}
	}
	for _, f := range p.funcs.all {
		fl.info, fl.pkg, fl.cur = f.pkg.info, f.pkg.types, f
		fl.stmts(f.body().List)
		if f.lit != nil {
			fl.captured[f] = capturedVars(f)
		}
	}
	fl.cur = nil
	fl.resolve()
	for _, f := range p.funcs.all {
		sort.SliceStable(f.events, func(i, j int) bool { return f.events[i].pos < f.events[j].pos })
	}
	fl.markEscapes()
	fl.holdersOf()
	fl.mutated, fl.writes = p.mutatedVars()
	fl.cl.freeze()
	for _, f := range p.funcs.all {
		p.blockEvents(f)
	}
	return fl
}

// globals walks a file's package-level variable initialisers.
func (fl *flow) globals(af *ast.File) {
	for _, d := range af.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.VAR {
			for _, s := range gd.Specs {
				fl.valueSpec(s.(*ast.ValueSpec))
			}
		}
	}
}

// varNode is the storage of a variable (one per field, all instances).
func (fl *flow) varNode(v *types.Var) node {
	if v == nil {
		return none
	}
	v = v.Origin()
	if n, ok := fl.vars[v]; ok {
		return n
	}
	if fl.cl.frozen {
		return none
	}
	n := fl.cl.newNode()
	fl.vars[v] = n
	d := fl.cl.data(n)
	switch {
	case v.IsField():
		d.flags |= fField
	case v.Pkg() != nil && v.Parent() == v.Pkg().Scope():
		d.flags |= fGlobal
	}
	d.vars = append(d.vars, v)
	return n
}

// alloc is a fresh object made at pos.
func (fl *flow) alloc(pos token.Pos, kind string) node {
	n := fl.cl.newNode()
	fl.cl.data(n).allocs = append(fl.cl.data(n).allocs, Alloc{Func: fl.cur, Pos: pos, Kind: kind})
	return n
}

// event records an operation of the function being walked on the
// value of operand.
func (fl *flow) event(pos, end token.Pos, op Op, obj node, sel bool, operand ast.Expr) bool {
	if fl.cur == nil || obj == none {
		return false
	}
	fl.cur.events = append(fl.cur.events, event{pos: pos, end: end, op: op, obj: obj, select_: sel, v: localVar(fl.info, operand), path: fl.pathOf(operand)})
	return true
}

// flowInto makes the location dst (of type dstT) hold the value r (of
// type srcT): an interface records the dynamic type it receives.
func (fl *flow) flowInto(dst node, dstT types.Type, r node, srcT types.Type) {
	if dst == none || r == none {
		return
	}
	fl.cl.join(fl.cl.pts(dst), r)
	if isInterface(dstT) && srcT != nil && !isInterface(srcT) {
		d := fl.cl.data(r)
		d.dyn = appendTypes(d.dyn, []types.Type{srcT})
	}
}

// assign evaluates src into the location dst of type dstT.
func (fl *flow) assign(dst node, dstT types.Type, src ast.Expr) {
	r := fl.ref(src)
	fl.flowInto(dst, dstT, r, fl.info.TypeOf(src))
}

func isInterface(t types.Type) bool {
	if t == nil {
		return false
	}
	_, ok := t.Underlying().(*types.Interface)
	return ok
}

// stmts walks statements.
func (fl *flow) stmts(list []ast.Stmt) {
	for _, s := range list {
		fl.stmt(s)
	}
}

// stmt walks one statement: its value flows, operations and calls.
func (fl *flow) stmt(s ast.Stmt) {
	switch x := s.(type) {
	case *ast.AssignStmt:
		fl.assignStmt(x, false)
	case *ast.DeclStmt:
		if gd, ok := x.Decl.(*ast.GenDecl); ok && gd.Tok == token.VAR {
			for _, sp := range gd.Specs {
				fl.valueSpec(sp.(*ast.ValueSpec))
			}
		}
	case *ast.ExprStmt:
		fl.ref(x.X)
	case *ast.SendStmt:
		fl.send(x, false)
	case *ast.IncDecStmt:
		fl.ref(x.X)
	case *ast.GoStmt:
		fl.call(x.Call, callGo)
	case *ast.DeferStmt:
		fl.call(x.Call, callDefer)
	case *ast.ReturnStmt:
		fl.returnStmt(x)
	case *ast.BlockStmt:
		fl.stmts(x.List)
	case *ast.IfStmt:
		fl.opt(x.Init)
		fl.ref(x.Cond)
		fl.stmts(x.Body.List)
		fl.opt(x.Else)
	case *ast.ForStmt:
		fl.opt(x.Init)
		fl.ref(x.Cond)
		fl.opt(x.Post)
		fl.stmts(x.Body.List)
	case *ast.RangeStmt:
		fl.rangeStmt(x)
	case *ast.SwitchStmt:
		fl.switchStmt(x)
	case *ast.TypeSwitchStmt:
		fl.typeSwitch(x)
	case *ast.SelectStmt:
		fl.selectStmt(x)
	case *ast.LabeledStmt:
		fl.stmt(x.Stmt)
	}
}

// opt walks a statement that may be absent.
func (fl *flow) opt(s ast.Stmt) {
	if s != nil {
		fl.stmt(s)
	}
}

// valueSpec walks var x, y = a, b.
func (fl *flow) valueSpec(vs *ast.ValueSpec) {
	if len(vs.Values) == 1 && len(vs.Names) > 1 {
		rs := fl.multi(vs.Values[0])
		for i, n := range vs.Names {
			if i < len(rs) {
				fl.flowInto(fl.defNode(n), fl.info.TypeOf(n), rs[i], nil)
			}
		}
		return
	}
	for i, n := range vs.Names {
		if i < len(vs.Values) {
			fl.assign(fl.defNode(n), fl.info.TypeOf(n), vs.Values[i])
		}
	}
}

// defNode is the storage an identifier defines or names, none for _.
func (fl *flow) defNode(id *ast.Ident) node {
	if id.Name == "_" {
		return none
	}
	obj := fl.info.Defs[id]
	if obj == nil {
		obj = fl.info.Uses[id]
	}
	v, _ := obj.(*types.Var)
	return fl.varNode(v)
}

// assignStmt walks an assignment (sel: it is a select's receive case).
func (fl *flow) assignStmt(x *ast.AssignStmt, sel bool) {
	if x.Tok != token.ASSIGN && x.Tok != token.DEFINE {
		for _, e := range append(x.Lhs, x.Rhs...) {
			fl.ref(e)
		}
		return
	}
	if len(x.Rhs) == 1 && len(x.Lhs) > 1 {
		var rs []node
		if u, ok := ast.Unparen(x.Rhs[0]).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
			rs = []node{fl.recv(u, sel)}
		} else {
			rs = fl.multi(x.Rhs[0])
		}
		for i, l := range x.Lhs {
			if i < len(rs) {
				fl.flowInto(fl.lhs(l), fl.info.TypeOf(l), rs[i], nil)
			}
		}
		return
	}
	for i, l := range x.Lhs {
		if i >= len(x.Rhs) {
			break
		}
		r := x.Rhs[i]
		if u, ok := ast.Unparen(r).(*ast.UnaryExpr); ok && u.Op == token.ARROW && sel {
			fl.flowInto(fl.lhs(l), fl.info.TypeOf(l), fl.recv(u, true), nil)
			continue
		}
		fl.assign(fl.lhs(l), fl.info.TypeOf(l), r)
	}
}

// lhs is the location an assignment's left side stores to.
func (fl *flow) lhs(e ast.Expr) node {
	if id, ok := ast.Unparen(e).(*ast.Ident); ok {
		return fl.defNode(id)
	}
	return fl.loc(e)
}

// multi evaluates an expression giving several values (a call, a map
// index or type assertion with ok): their value classes.
func (fl *flow) multi(e ast.Expr) []node {
	if c, ok := ast.Unparen(e).(*ast.CallExpr); ok {
		return fl.call(c, callPlain)
	}
	return []node{fl.ref(e), none}
}

// send walks a send statement (sel: a select's send case).
func (fl *flow) send(x *ast.SendStmt, sel bool) {
	ch := fl.ref(x.Chan)
	v := fl.ref(x.Value)
	fl.cl.join(fl.cl.pts(fl.cl.elem(ch)), v)
	fl.noteSent(fl.cl.elem(ch), fl.info.TypeOf(x.Value))
	fl.event(x.Arrow, x.End(), OpSend, ch, sel, x.Chan)
}

// noteSent records the type of a value sent into a channel's element
// class: the receivers, who need not descend from the sender, reach
// what that type's fields hold (fields are classes by type).
func (fl *flow) noteSent(elem node, t types.Type) {
	if elem == none || t == nil || scalar(t) {
		return
	}
	d := fl.cl.data(elem)
	d.sent = appendTypes(d.sent, []types.Type{t})
}

// recv walks a receive expression and returns the value received.
func (fl *flow) recv(u *ast.UnaryExpr, sel bool) node {
	ch := fl.ref(u.X)
	fl.event(u.OpPos, u.End(), OpRecv, ch, sel, u.X)
	return fl.cl.pts(fl.cl.elem(ch))
}

// returnStmt joins returned values with the function's results.
func (fl *flow) returnStmt(x *ast.ReturnStmt) {
	if fl.cur == nil || fl.cur.sig == nil {
		for _, e := range x.Results {
			fl.ref(e)
		}
		return
	}
	res := fl.cur.sig.Results()
	if len(x.Results) == 1 && res.Len() > 1 {
		rs := fl.multi(x.Results[0])
		for i := 0; i < res.Len() && i < len(rs); i++ {
			fl.flowInto(fl.varNode(res.At(i)), res.At(i).Type(), rs[i], nil)
		}
		return
	}
	for i, e := range x.Results {
		if i < res.Len() {
			fl.assign(fl.varNode(res.At(i)), res.At(i).Type(), e)
		}
	}
}

// rangeStmt walks a range loop: its variables receive the elements (a
// channel's, by receiving from it).
func (fl *flow) rangeStmt(x *ast.RangeStmt) {
	t := fl.info.TypeOf(x.X)
	var elems node
	switch u := under(t).(type) {
	case *types.Chan:
		ch := fl.ref(x.X)
		fl.event(x.For, x.X.End(), OpRecv, ch, false, x.X)
		elems = fl.cl.pts(fl.cl.elem(ch))
		fl.rangeVar(x.Key, elems)
	case *types.Signature:
		fl.dynCall(x.X, fl.ref(x.X), callPlain, x.For)
	case *types.Map, *types.Slice, *types.Pointer:
		_ = u
		elems = fl.cl.pts(fl.cl.elem(fl.ref(x.X)))
		fl.rangeVar(x.Value, elems)
		if _, ok := u.(*types.Map); ok {
			fl.rangeVar(x.Key, elems)
		}
	case *types.Array:
		elems = fl.cl.pts(fl.cl.elem(fl.loc(x.X)))
		fl.rangeVar(x.Value, elems)
	default:
		fl.ref(x.X)
	}
	fl.stmts(x.Body.List)
}

// rangeVar makes a range variable hold the elements' values.
func (fl *flow) rangeVar(e ast.Expr, elems node) {
	if e == nil || elems == none {
		return
	}
	fl.cl.join(fl.cl.pts(fl.lhs(e)), elems)
}

func under(t types.Type) types.Type {
	if t == nil {
		return nil
	}
	return t.Underlying()
}

// switchStmt walks an expression switch.
func (fl *flow) switchStmt(x *ast.SwitchStmt) {
	fl.opt(x.Init)
	if x.Tag != nil {
		fl.ref(x.Tag)
	}
	for _, c := range x.Body.List {
		cc := c.(*ast.CaseClause)
		for _, e := range cc.List {
			fl.ref(e)
		}
		fl.stmts(cc.Body)
	}
}

// typeSwitch walks a type switch: each clause's variable holds the
// switched value.
func (fl *flow) typeSwitch(x *ast.TypeSwitchStmt) {
	fl.opt(x.Init)
	var v node
	switch a := x.Assign.(type) {
	case *ast.AssignStmt:
		v = fl.ref(a.Rhs[0].(*ast.TypeAssertExpr).X)
	case *ast.ExprStmt:
		v = fl.ref(a.X.(*ast.TypeAssertExpr).X)
	}
	for _, c := range x.Body.List {
		cc := c.(*ast.CaseClause)
		if obj, ok := fl.info.Implicits[cc].(*types.Var); ok {
			fl.cl.join(fl.cl.pts(fl.varNode(obj)), v)
		}
		fl.stmts(cc.Body)
	}
}

// selectStmt walks a select: each case's communication is an operation
// the select may pick.
func (fl *flow) selectStmt(x *ast.SelectStmt) {
	for _, c := range x.Body.List {
		cc := c.(*ast.CommClause)
		switch s := cc.Comm.(type) {
		case *ast.SendStmt:
			fl.send(s, true)
		case *ast.ExprStmt:
			if u, ok := ast.Unparen(s.X).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
				fl.recv(u, true)
			} else {
				fl.ref(s.X)
			}
		case *ast.AssignStmt:
			fl.assignStmt(s, true)
		}
		fl.stmts(cc.Body)
	}
}
