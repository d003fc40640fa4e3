package gosrc

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// modeled walks a call of a standard-library function whose effect the
// analysis knows without reading its body: the sync methods, timers,
// contexts and signal.Notify. ok is false for any other function.
func (fl *flow) modeled(c *ast.CallExpr, ce callee, kind callKind) ([]node, bool) {
	name := ce.obj.Origin().FullName()
	if op, ok := syncOp(ce.obj); ok {
		fl.syncCall(c, ce, op)
		return nil, true
	}
	args := func() []node {
		out := make([]node, len(c.Args))
		for i, a := range c.Args {
			out[i] = fl.ref(a)
		}
		return out
	}
	switch name {
	case "(*sync.Once).Do":
		a := args()
		if ce.recv == nil || len(a) != 1 || a[0] == none {
			return nil, true
		}
		fl.recvRef(ce.recv.(*ast.SelectorExpr), ce.sel)
		fl.addSite(&callSite{pos: c.Lparen, end: c.Rparen, caller: fl.cur, kind: kind, dyn: a[0]})
		return nil, true
	case "(*sync.WaitGroup).Go":
		a := args()
		if ce.recv == nil || len(a) != 1 || a[0] == none {
			return nil, true
		}
		wg := fl.recvRef(ce.recv.(*ast.SelectorExpr), ce.sel)
		fl.event(c.Lparen, c.Rparen, OpAddPos, wg, false, ce.recv.(*ast.SelectorExpr).X)
		site := &callSite{pos: c.Lparen, end: c.Rparen, caller: fl.cur, kind: callGo, dyn: a[0]}
		fl.addSite(site)
		if fl.event(c.Lparen, c.Rparen, OpDone, wg, false, ce.recv.(*ast.SelectorExpr).X) {
			done := fl.cur.events[len(fl.cur.events)-1]
			site.goDone = &done // the started goroutine's, once its function returns
		}
		return nil, true
	case "sync.NewCond":
		args()
		return []node{fl.alloc(c.Lparen, "cond")}, true
	case "os/signal.Notify":
		a := args()
		if len(a) > 0 && a[0] != none {
			fl.cl.data(a[0]).flags |= fSignal
		}
		return nil, true
	case "time.After", "time.Tick":
		args()
		ch := fl.alloc(c.Lparen, "timer")
		fl.cl.data(ch).flags |= fTimer
		return []node{ch}, true
	case "time.AfterFunc":
		a := args()
		fl.asyncCallback(a)
		if len(a) == 2 {
			fl.timerCallbacks(a[1], c.Lparen, none)
		}
		return []node{fl.alloc(c.Lparen, "timer")}, true
	}
	return fl.modeledContext(c, name, args)
}

// syncCall records a modeled sync method's operation on its receiver.
func (fl *flow) syncCall(c *ast.CallExpr, ce callee, op Op) {
	var obj node
	var operand ast.Expr
	var at place
	var path accessPath
	if ce.recv != nil {
		obj, operand = fl.recvRef(ce.recv.(*ast.SelectorExpr), ce.sel), ce.recv.(*ast.SelectorExpr).X
		if idx := ce.sel.Index(); len(idx) > 0 {
			at, _ = fl.placeOf(operand, idx[:len(idx)-1])
			path = fl.pathOf(operand).through(fl.info.TypeOf(operand), idx[:len(idx)-1])
		}
	} else if len(c.Args) > 0 {
		obj, operand = fl.ref(c.Args[0]), c.Args[0] // (*sync.Mutex).Lock(mu)
		path = fl.pathOf(operand)
	}
	for _, a := range c.Args {
		fl.ref(a)
	}
	if op == OpAdd && len(c.Args) == 1 && !negativeConst(fl.info, c.Args[0]) {
		op = OpAddPos // Add(n), n not a negative constant: it adds work, it releases no one
	}
	if op != OpNone && fl.event(c.Lparen, c.Rparen, op, obj, false, operand) {
		e := &fl.cur.events[len(fl.cur.events)-1]
		e.at, e.path = at, path
	}
}

// negativeConst reports a constant argument below zero.
func negativeConst(info *types.Info, e ast.Expr) bool {
	tv, ok := info.Types[e]
	return ok && tv.Value != nil && strings.HasPrefix(tv.Value.String(), "-")
}

// asyncCallback records the functions among a call's arguments as ones
// that may run later on a goroutine no dump shows (a timer's).
func (fl *flow) asyncCallback(args []node) {
	for _, a := range args {
		if a != none {
			fl.callbacks = append(fl.callbacks, fl.cl.data(a).funcs...)
		}
	}
}

// timerCallbacks records the functions fn may hold as run by the
// runtime on a goroutine of their own (done: once that context's Done
// channel is closed; none: when a timer fires).
func (fl *flow) timerCallbacks(fn node, pos token.Pos, done node) {
	if fn == none {
		return
	}
	for _, f := range fl.cl.data(fn).funcs {
		fl.timers = append(fl.timers, timerCallback{f: f, pos: pos, done: done})
	}
}

// modeledContext walks the context package's constructors: a derived
// context records its parent, a cancel function the context it cancels,
// and Done gives a channel per context class.
func (fl *flow) modeledContext(c *ast.CallExpr, name string, args func() []node) ([]node, bool) {
	switch name {
	case "context.Background", "context.TODO":
		ctx := fl.alloc(c.Lparen, "context")
		fl.cl.data(ctx).flags |= fCtxRoot
		return []node{ctx}, true
	case "context.WithCancel", "context.WithCancelCause", "context.WithTimeout", "context.WithDeadline",
		"context.WithTimeoutCause", "context.WithDeadlineCause":
		a := args()
		ctx := fl.derived(c, a)
		if name != "context.WithCancel" && name != "context.WithCancelCause" {
			fl.cl.data(ctx).flags |= fTimer
		}
		cancel := fl.alloc(c.Lparen, "cancel")
		d := fl.cl.data(cancel)
		d.flags |= fCancel
		d.cancels = append(d.cancels, ctx)
		return []node{ctx, cancel}, true
	case "context.WithValue":
		return []node{fl.derived(c, args())}, true
	case "context.WithoutCancel":
		args()
		ctx := fl.alloc(c.Lparen, "context")
		fl.cl.data(ctx).flags |= fCtxRoot
		return []node{ctx}, true
	case "context.AfterFunc":
		a := args()
		fl.asyncCallback(a)
		if len(a) == 2 && a[0] != none {
			done := fl.cl.elem(a[0])
			fl.dones = append(fl.dones, [2]node{a[0], done})
			fl.timerCallbacks(a[1], c.Lparen, done)
		}
		return []node{fl.alloc(c.Lparen, "func")}, true
	case "(context.Context).Done":
		ce := fl.calleeOf(ast.Unparen(c.Fun))
		if ce.recv == nil {
			return nil, true
		}
		ctx := fl.recvRef(ce.recv.(*ast.SelectorExpr), ce.sel)
		done := fl.cl.elem(ctx)
		fl.dones = append(fl.dones, [2]node{ctx, done})
		return []node{done}, true
	}
	return nil, false
}

// derived is a new context made from args[0].
func (fl *flow) derived(c *ast.CallExpr, a []node) node {
	ctx := fl.alloc(c.Lparen, "context")
	if len(a) > 0 && a[0] != none {
		fl.cl.data(ctx).parents = append(fl.cl.data(ctx).parents, a[0])
	}
	return ctx
}

// seedTime marks every timer's and ticker's channel field as a timer
// channel (time.NewTimer(d).C).
func (fl *flow) seedTime() {
	k := fl.p.pkgs["time"]
	if k == nil || k.types == nil {
		return
	}
	for _, name := range []string{"Timer", "Ticker"} {
		tn, ok := k.types.Scope().Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		st, ok := tn.Type().Underlying().(*types.Struct)
		if !ok {
			continue
		}
		for i := 0; i < st.NumFields(); i++ {
			if f := st.Field(i); f.Name() == "C" {
				fl.cl.data(fl.cl.pts(fl.varNode(f))).flags |= fTimer
			}
		}
	}
}
