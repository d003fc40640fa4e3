package gosrc

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"
)

// Fresh locals. A local variable of a function whose every assignment
// makes a new object (make, new, a composite literal, sync.NewCond, or
// a declaration without a value) holds, each time its definition runs,
// an object no goroutine held before. An operation on it after its
// definition on the path — in a loop's next turn, or anywhere in a call
// yet to come — cannot end a wait that exists now:
//
//	for {
//		ch := make(chan int)
//		go worker(ch)
//		if ok { <-ch }   // the next turn receives from a new ch:
//		time.Sleep(d)    // no worker parked now is ever received from
//	}

// localVar is the variable an operand names, when it is a plain
// identifier of a variable; nil otherwise.
func localVar(info *types.Info, x ast.Expr) *types.Var {
	id, ok := ast.Unparen(x).(*ast.Ident)
	if !ok || info == nil {
		return nil
	}
	v, _ := info.Uses[id].(*types.Var)
	return v
}

// freshDef is one definition of a fresh local: where, and the value it
// is given (nil for a declaration without one: the zero value).
type freshDef struct {
	pos token.Pos
	rhs ast.Expr
}

// freshVars finds f's fresh locals, with where each is (re)defined
// (built with its graph: see Program.graph).
func freshVars(f *Func) map[*types.Var][]freshDef {
	fresh := map[*types.Var][]freshDef{}
	info := f.pkg.info
	if info == nil || f.body() == nil {
		return fresh
	}
	not, declared := map[*types.Var]bool{}, map[*types.Var]bool{}
	def := func(v *types.Var, rhs ast.Expr, pos token.Pos, made bool) {
		if v == nil {
			return
		}
		if made && (rhs == nil || isAlloc(info, rhs)) {
			fresh[v] = append(fresh[v], freshDef{pos, rhs})
		} else {
			not[v] = true
		}
	}
	walkOwn(f.body(), false, func(n ast.Node, inLit bool) {
		if id, ok := n.(*ast.Ident); ok && !inLit {
			if v, ok := info.Defs[id].(*types.Var); ok {
				declared[v] = true // declared in the body itself: no parameter, no result
			}
		}
		switch x := n.(type) {
		case *ast.AssignStmt:
			assignFresh(info, x, inLit, def)
		case *ast.ValueSpec:
			for i, id := range x.Names {
				v, _ := info.Defs[id].(*types.Var)
				var rhs ast.Expr
				if i < len(x.Values) {
					rhs = x.Values[i]
				}
				def(v, rhs, x.Pos(), !inLit && (len(x.Values) == 0 || len(x.Values) == len(x.Names)))
			}
		case *ast.IncDecStmt:
			def(localVar(info, x.X), nil, x.Pos(), false)
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{x.Key, x.Value} {
				if id, ok := e.(*ast.Ident); ok {
					v, _ := info.Defs[id].(*types.Var)
					def(v, nil, x.Pos(), false)
				}
			}
		}
	})
	for v := range fresh {
		if not[v] || !declared[v] {
			delete(fresh, v)
		}
	}
	return fresh
}

// assignFresh reports each variable an assignment writes to def: fresh
// when it defines or assigns it, outside a literal, one value each.
func assignFresh(info *types.Info, x *ast.AssignStmt, inLit bool, def func(*types.Var, ast.Expr, token.Pos, bool)) {
	paired := len(x.Lhs) == len(x.Rhs) && (x.Tok == token.DEFINE || x.Tok == token.ASSIGN)
	for i, l := range x.Lhs {
		id, ok := ast.Unparen(l).(*ast.Ident)
		if !ok {
			continue
		}
		v, _ := info.Defs[id].(*types.Var)
		if v == nil {
			v, _ = info.Uses[id].(*types.Var)
		}
		var rhs ast.Expr
		if paired {
			rhs = x.Rhs[i]
		}
		def(v, rhs, x.Pos(), paired && !inLit && rhs != nil)
	}
}

// walkOwn visits the nodes of a body, telling those inside function
// literals apart: their writes happen at times the body does not say.
func walkOwn(n ast.Node, inLit bool, visit func(ast.Node, bool)) {
	ast.Inspect(n, func(m ast.Node) bool {
		if m == nil {
			return false
		}
		if lit, ok := m.(*ast.FuncLit); ok && m != n {
			walkOwn(lit.Body, true, visit)
			return false
		}
		visit(m, inLit)
		return true
	})
}

// isAlloc reports an expression that makes a new object.
func isAlloc(info *types.Info, e ast.Expr) bool {
	if literalOf(e) != nil {
		return true
	}
	switch x := ast.Unparen(e).(type) {
	case *ast.CallExpr:
		switch fn := ast.Unparen(x.Fun).(type) {
		case *ast.Ident:
			b, ok := info.Uses[fn].(*types.Builtin)
			return ok && (b.Name() == "make" || b.Name() == "new")
		case *ast.SelectorExpr:
			f, ok := info.Uses[fn.Sel].(*types.Func)
			return ok && f.Pkg() != nil && f.Pkg().Path() == "sync" && f.Name() == "NewCond"
		}
	}
	return false
}

// freshOp reports an operation of f on one of its fresh locals.
func (p *Program) freshOp(f *Func, e event) bool {
	if e.v == nil || e.call != nil {
		return false
	}
	p.graph(f) // builds f.fresh
	_, ok := f.fresh[e.v]
	return ok
}

// freshBlocks are one fresh local's definitions and operations, by
// block, in position order.
type freshBlocks map[int32][]freshItem

// freshItem is a definition of the variable, or an operation on it, or
// a call acting through it on objects of the keys.
type freshItem struct {
	pos  token.Pos
	def  bool
	e    event
	keys []Key
}

// in lists a block's items from position at on.
func (fb freshBlocks) in(b int32, at token.Pos) []freshItem {
	items := fb[b]
	i := sort.Search(len(items), func(i int) bool { return items[i].pos >= at })
	return items[i:]
}

// freshItems builds, for each fresh local of f that f operates on, its
// items by block, the variables in declaration order.
func (fg *funcGraph) freshItems(f *Func) []freshBlocks {
	vars := make([]*types.Var, 0, len(f.fresh))
	for v := range f.fresh {
		vars = append(vars, v)
	}
	sort.Slice(vars, func(i, j int) bool { return vars[i].Pos() < vars[j].Pos() })
	var out []freshBlocks
	for _, v := range vars {
		fb, ops := freshBlocks{}, false
		for bi, evs := range fg.events {
			for _, e := range evs {
				if e.call == nil && e.v == v {
					fb[int32(bi)] = append(fb[int32(bi)], freshItem{pos: e.pos, e: e})
					ops = true
				}
			}
		}
		if !ops {
			continue
		}
		out = append(out, fg.withDefs(fb, f.fresh[v]))
	}
	return out
}

// withDefs adds a fresh local's definitions to its items and puts each
// block's items in position order.
func (fg *funcGraph) withDefs(fb freshBlocks, defs []freshDef) freshBlocks {
	for _, d := range defs {
		if b, ok := fg.blockAt(d.pos); ok {
			fb[b] = append(fb[b], freshItem{pos: d.pos, def: true})
		}
	}
	for _, items := range fb {
		sort.SliceStable(items, func(i, j int) bool { return items[i].pos < items[j].pos })
	}
	return fb
}

// blockAt is the block of the innermost node holding position pos.
func (fg *funcGraph) blockAt(pos token.Pos) (int32, bool) {
	best := -1
	for i, n := range fg.nodes {
		if n.pos <= pos && pos < n.end && (best < 0 || n.end-n.pos < fg.nodes[best].end-fg.nodes[best].pos) {
			best = i
		}
	}
	if best < 0 {
		return 0, false
	}
	return fg.nodes[best].block, true
}

// onceFresh reports an operation of f on a fresh local that f defines
// exactly once, outside its loops: each call of f makes one object for
// it, so the operation acts on the object of the call it runs in.
func (p *Program) onceFresh(f *Func, e event) bool {
	if !p.freshOp(f, e) {
		return false
	}
	defs := f.fresh[e.v]
	return len(defs) == 1 && !p.inLoop(f, p.fset.Position(defs[0].pos).Line)
}

// OnceAt reports whether the line of a frame lies outside every loop of
// its function: a go statement there runs at most once per call.
func (p *Program) OnceAt(fr Frame) bool {
	f, _ := p.FuncAt(fr.Function, fr.File, fr.Line)
	return f != nil && !p.inLoop(f, fr.Line)
}
