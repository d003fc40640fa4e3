package gosrc

import (
	"go/ast"
	"go/token"
	"go/types"
)

// callKind is how a call runs: in line, on a new goroutine, or at the
// function's return.
type callKind uint8

const (
	callPlain callKind = iota
	callGo
	callDefer
)

// callSite is one call in a body: its arguments' classes, its results'
// locations, and the functions it may call.
type callSite struct {
	pos, end token.Pos
	caller   *Func
	kind     callKind
	static   *Func       // the callee, when known and read
	decl     *types.Func // the callee, when known and not read
	dyn      node        // a func value's class, or an interface receiver's
	method   string      // the interface method called on dyn
	args     []node      // receiver first
	// argPaths are the arguments as access paths, aligned with args.
	argPaths []accessPath
	results  []node
	ellipsis bool
	recv     bool // args[0] is the receiver
	// callees are the functions it may call, read; unknown is set when
	// it may call code not read.
	callees []*Func
	unknown bool
	// goDone is the Done a goroutine that (*sync.WaitGroup).Go starts
	// calls once the function it runs returns.
	goDone *event
	done   map[*Func]bool
	// version is the dispatch class's state when last resolved.
	version [3]int
}

// callee is what a call's function expression names.
type callee struct {
	obj  *types.Func
	sel  *types.Selection // a method's selection
	recv ast.Expr         // a method call's receiver expression
	lit  *ast.FuncLit
	val  ast.Expr // a func value
}

// calleeOf reads a call's function expression.
func (fl *flow) calleeOf(fun ast.Expr) callee {
	switch f := fun.(type) {
	case *ast.FuncLit:
		return callee{lit: f}
	case *ast.Ident:
		if o, ok := fl.info.Uses[f].(*types.Func); ok {
			return callee{obj: o}
		}
	case *ast.SelectorExpr:
		sel := fl.info.Selections[f]
		if sel == nil {
			if o, ok := fl.info.Uses[f.Sel].(*types.Func); ok {
				return callee{obj: o}
			}
			break
		}
		switch sel.Kind() {
		case types.MethodVal:
			return callee{obj: sel.Obj().(*types.Func), sel: sel, recv: f}
		case types.MethodExpr:
			return callee{obj: sel.Obj().(*types.Func)}
		}
	case *ast.IndexExpr:
		if c := fl.calleeOf(ast.Unparen(f.X)); c.obj != nil {
			return c
		}
	case *ast.IndexListExpr:
		if c := fl.calleeOf(ast.Unparen(f.X)); c.obj != nil {
			return c
		}
	}
	return callee{val: fun}
}

// call walks a call (kind: plain, go or defer) and returns its results'
// value classes.
func (fl *flow) call(c *ast.CallExpr, kind callKind) []node {
	fun := ast.Unparen(c.Fun)
	tv := fl.info.Types[fun]
	if tv.IsType() {
		return fl.conversion(c, tv.Type)
	}
	if tv.IsBuiltin() {
		return fl.builtin(c, fun)
	}
	ce := fl.calleeOf(fun)
	if ce.obj != nil {
		if rs, ok := fl.modeled(c, ce, kind); ok {
			return rs
		}
	}
	site := &callSite{pos: c.Lparen, end: c.Rparen, caller: fl.cur, kind: kind, dyn: none, ellipsis: c.Ellipsis.IsValid()}
	if ce.recv != nil {
		x := ce.recv.(*ast.SelectorExpr).X
		site.args = append(site.args, fl.recvRef(ce.recv.(*ast.SelectorExpr), ce.sel))
		idx := ce.sel.Index()
		site.argPaths = append(site.argPaths, fl.pathOf(x).through(fl.info.TypeOf(x), idx[:len(idx)-1]))
		site.recv = true
	} else if ce.obj != nil && ce.obj.Type().(*types.Signature).Recv() != nil {
		site.recv = true // T.M(x, …)
	}
	for _, a := range c.Args {
		site.args = append(site.args, fl.ref(a))
		site.argPaths = append(site.argPaths, fl.pathOf(a))
	}
	site.results = fl.resultNodes(c)
	switch {
	case ce.lit != nil:
		site.static = fl.p.funcs.byLit[ce.lit]
		fl.litValue(ce.lit)
	case ce.obj != nil && ce.sel != nil && isInterface(ce.sel.Recv()):
		site.dyn, site.method = site.args[0], ce.obj.Name()
	case ce.obj != nil:
		site.static = fl.p.funcs.byObj[ce.obj.Origin()]
		if site.static == nil {
			site.decl = ce.obj
		}
	default:
		site.dyn = fl.ref(ce.val)
	}
	fl.addSite(site)
	return fl.resultRefs(site)
}

// addSite records a call site, connecting what it is known to call.
func (fl *flow) addSite(site *callSite) {
	fl.sites = append(fl.sites, site)
	if fl.cur != nil {
		fl.cur.events = append(fl.cur.events, event{pos: site.pos, end: site.end, call: site})
	}
	switch {
	case site.static != nil:
		fl.connect(site, site.static)
	case site.decl != nil:
		fl.opaqueCall(site, site.decl)
	}
}

// dynCall records a call of a func value (a range over an iterator).
func (fl *flow) dynCall(e ast.Expr, fn node, kind callKind, pos token.Pos) {
	fl.addSite(&callSite{pos: pos, end: e.End(), caller: fl.cur, kind: kind, dyn: fn})
}

// resultNodes are fresh locations for a call's results.
func (fl *flow) resultNodes(c *ast.CallExpr) []node {
	n := 0
	switch t := fl.info.TypeOf(c).(type) {
	case *types.Tuple:
		n = t.Len()
	case nil:
	default:
		n = 1
	}
	out := make([]node, n)
	for i := range out {
		out[i] = fl.cl.newNode()
	}
	return out
}

// resultRefs are the value classes of a call's results.
func (fl *flow) resultRefs(site *callSite) []node {
	out := make([]node, len(site.results))
	for i, r := range site.results {
		out[i] = fl.cl.pts(r)
	}
	return out
}

// connect joins a call's arguments with f's parameters and its results
// with f's.
func (fl *flow) connect(site *callSite, f *Func) { fl.connectRecv(site, f, none) }

// connectRecv is connect with the receiver's class given (none: the
// call's first argument).
func (fl *flow) connectRecv(site *callSite, f *Func, recv node) {
	if site.done == nil {
		site.done = map[*Func]bool{}
	}
	if site.done[f] {
		return
	}
	site.done[f] = true
	site.callees = append(site.callees, f)
	if f.sig == nil {
		return
	}
	params := sigParams(f.sig, site.recv)
	if recv != none && site.recv && len(site.args) > 0 {
		saved := site.args[0]
		site.args[0] = recv
		defer func() { site.args[0] = saved }()
	}
	fl.joinArgs(site, params, f.sig.Variadic())
	res := f.sig.Results()
	for i := 0; i < res.Len() && i < len(site.results); i++ {
		fl.cl.join(site.results[i], fl.varNode(res.At(i)))
	}
}

// sigParams lists a signature's parameters, its receiver first when the
// call passes one.
func sigParams(sig *types.Signature, withRecv bool) []*types.Var {
	var out []*types.Var
	if withRecv && sig.Recv() != nil {
		out = append(out, sig.Recv())
	}
	for i := 0; i < sig.Params().Len(); i++ {
		out = append(out, sig.Params().At(i))
	}
	return out
}

// joinArgs joins arguments with parameters; the extra arguments of a
// variadic call go into the last parameter's slice.
func (fl *flow) joinArgs(site *callSite, params []*types.Var, variadic bool) {
	for i, a := range site.args {
		switch {
		case i < len(params)-1 || i == len(params)-1 && (!variadic || site.ellipsis):
			fl.cl.join(fl.cl.pts(fl.varNode(params[i])), a)
		case variadic && len(params) > 0:
			last := fl.cl.pts(fl.varNode(params[len(params)-1]))
			fl.cl.join(fl.cl.pts(fl.cl.elem(last)), a)
		}
	}
}

// opaqueCall records a call of code not read: what it is passed may be
// operated on by that code, the functions it is passed may run at any
// time, and what it returns was made there.
func (fl *flow) opaqueCall(site *callSite, fn *types.Func) {
	site.unknown = true
	sig, _ := fn.Type().(*types.Signature)
	std := fn.Pkg() == nil || fl.p.cfg.Libraries.isStd(fn.Pkg().Path())
	params := []*types.Var{}
	if sig != nil {
		params = sigParams(sig, site.recv)
	}
	for i, a := range site.args {
		var t types.Type
		if i < len(params) {
			t = params[i].Type()
		}
		if a == none || std && t != nil && !mayOperate(t) {
			continue
		}
		fl.cl.data(a).flags |= fOpaque
		fl.callbacks = append(fl.callbacks, fl.cl.data(a).funcs...)
	}
	for _, r := range site.results {
		fl.cl.data(fl.cl.pts(r)).flags |= fOpaque
	}
}

// mayOperate reports whether standard-library code given a value of
// type t can operate on a channel, lock or context through it or call a
// function in it: t holds a channel, a function, a sync or context type,
// or an interface with methods (an empty interface is only printed or
// stored: the standard library does not receive from channels it is
// given as any).
func mayOperate(t types.Type) bool {
	switch u := t.Underlying().(type) {
	case *types.Chan, *types.Signature:
		return true
	case *types.Interface:
		return u.NumMethods() > 0
	case *types.Pointer:
		return mayOperate(u.Elem())
	case *types.Slice:
		return mayOperate(u.Elem())
	case *types.Struct:
		return true
	}
	if n, ok := t.(*types.Named); ok && n.Obj().Pkg() != nil {
		switch n.Obj().Pkg().Path() {
		case "sync", "context":
			return true
		}
	}
	return false
}

// conversion evaluates T(x): the same value (an interface records its
// dynamic type).
func (fl *flow) conversion(c *ast.CallExpr, t types.Type) []node {
	if len(c.Args) != 1 {
		return nil
	}
	r := fl.ref(c.Args[0])
	if isInterface(t) {
		tmp := fl.cl.newNode()
		fl.cl.join(fl.cl.pts(tmp), r)
		fl.flowInto(tmp, t, r, fl.info.TypeOf(c.Args[0]))
	}
	return []node{r}
}

// builtin walks a call of a built-in function.
func (fl *flow) builtin(c *ast.CallExpr, fun ast.Expr) []node {
	name := ""
	if id, ok := fun.(*ast.Ident); ok {
		name = id.Name
	}
	args := c.Args
	switch name {
	case "make":
		for i, a := range args {
			if i > 0 {
				fl.ref(a)
			}
		}
		kind := "slice"
		switch under(fl.info.TypeOf(c)).(type) {
		case *types.Chan:
			kind = "chan"
		case *types.Map:
			kind = "map"
		}
		return []node{fl.alloc(c.Lparen, kind)}
	case "new":
		return []node{fl.alloc(c.Lparen, "new")}
	case "append":
		return []node{fl.appendCall(c)}
	case "copy":
		if len(args) == 2 {
			fl.cl.join(fl.cl.elem(fl.ref(args[0])), fl.cl.elem(fl.ref(args[1])))
		}
		return nil
	case "close":
		if len(args) == 1 {
			fl.event(c.Lparen, c.Rparen, OpClose, fl.ref(args[0]), false, args[0])
		}
		return nil
	}
	for _, a := range args {
		fl.ref(a)
	}
	return nil
}

// appendCall evaluates append(s, xs...): the elements join s's.
func (fl *flow) appendCall(c *ast.CallExpr) node {
	if len(c.Args) == 0 {
		return none
	}
	s := fl.ref(c.Args[0])
	if s == none {
		s = fl.alloc(c.Lparen, "slice")
	}
	for _, a := range c.Args[1:] {
		if c.Ellipsis.IsValid() {
			fl.cl.join(fl.cl.elem(s), fl.cl.elem(fl.ref(a)))
			continue
		}
		fl.cl.join(fl.cl.pts(fl.cl.elem(s)), fl.ref(a))
	}
	return s
}
