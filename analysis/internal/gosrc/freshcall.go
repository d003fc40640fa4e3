package gosrc

import (
	"cmp"
	"go/ast"
	"go/token"
	"go/types"
	"maps"
	"slices"
)

// Fresh calls. A call whose every object of a kind (its origins: see
// origin.go) is reached from a fresh local of the caller (fresh.go),
// through fields the local's composite literal gave new objects and no
// statement writes again, acts only on objects made when that local is
// defined: before then, on none a goroutine waits on now.
//
//	func start() {
//		rq := &Controller{queue: &Queue{cond: sync.NewCond(&sync.Mutex{})}}
//		go rq.worker()    // waits on rq.queue.cond
//		rq.signals()      // signals rq.queue.cond: no worker parked before
//	}                     // this call of start made it

// freshRoot is the fresh local of f through which call event e acts on
// every object of key k it can (an operation needing no matching): the
// call then acts only on objects made when that local is defined. nil
// when there is none.
func (q *Query) freshRoot(f *Func, e event, k Key) *types.Var {
	key := freshCallKey{e.call, k}
	if v, ok := q.freshCalls[key]; ok {
		return v
	}
	v := q.computeFreshRoot(f, e, k)
	q.freshCalls[key] = v
	return v
}

// freshCallKey indexes the fresh roots computed.
type freshCallKey struct {
	s *callSite
	k Key
}

// computeFreshRoot checks every origin of every callee reaching k.
func (q *Query) computeFreshRoot(f *Func, e event, k Key) *types.Var {
	p := q.p
	p.graph(f) // builds f.fresh
	paths, ok := q.callPaths(e.call, k)
	if !ok || len(paths) == 0 {
		return nil
	}
	root := paths[0].root
	defs, fresh := f.fresh[root]
	if !fresh {
		return nil
	}
	for _, path := range paths {
		if path.root != root || !p.stablePath(path.fields) {
			return nil
		}
		for _, d := range defs {
			if !freshAlong(f.pkg.info, d.rhs, path.fields) {
				return nil
			}
		}
	}
	return root
}

// freshAlong reports that the object reached from the value of e
// through fields is one e's evaluation makes: e is the zero value, or a
// composite literal giving each field on the way a new object (or
// nothing: a field never written again stays nil), or the last field
// is held by value in the new struct.
func freshAlong(info *types.Info, e ast.Expr, fields []*types.Var) bool {
	if e == nil {
		return true
	}
	if len(fields) == 0 {
		return isAlloc(info, e)
	}
	lit := literalOf(e)
	if lit == nil {
		return false
	}
	val, ok := litField(info, lit, fields[0])
	switch {
	case !ok:
		return false
	case val == nil:
		return true // not given: the zero value
	case len(fields) == 1 && byValue(fields[0].Type()):
		return true // copied into the new struct's own storage
	}
	return freshAlong(info, val, fields[1:])
}

// literalOf is the composite literal e is, or takes the address of.
func literalOf(e ast.Expr) *ast.CompositeLit {
	switch x := ast.Unparen(e).(type) {
	case *ast.CompositeLit:
		return x
	case *ast.UnaryExpr:
		if x.Op == token.AND {
			lit, _ := ast.Unparen(x.X).(*ast.CompositeLit)
			return lit
		}
	}
	return nil
}

// litField is the value a struct literal gives field f (nil when it
// gives none); ok is false when the literal's struct has no field f.
func litField(info *types.Info, lit *ast.CompositeLit, f *types.Var) (ast.Expr, bool) {
	st, ok := under(info.TypeOf(lit)).(*types.Struct)
	if !ok {
		return nil, false
	}
	idx := -1
	for i := 0; i < st.NumFields(); i++ {
		if st.Field(i).Origin() == f {
			idx = i
		}
	}
	if idx < 0 {
		return nil, false
	}
	for i, el := range lit.Elts {
		kv, keyed := el.(*ast.KeyValueExpr)
		switch {
		case !keyed && i == idx:
			return el, true
		case keyed:
			if id, ok := kv.Key.(*ast.Ident); ok && id.Name == f.Name() {
				return kv.Value, true
			}
		}
	}
	return nil, true
}

// byValue reports a type whose values a struct field holds in its own
// storage: neither a pointer nor a reference (interface, channel, map,
// slice, function).
func byValue(t types.Type) bool {
	switch under(t).(type) {
	case *types.Struct, *types.Array, *types.Basic:
		return true
	}
	return false
}

// freshCallBlocks lists, for each fresh local of f that a call acts
// through (freshRoot), its definitions and those calls with their keys,
// by block, the variables in declaration order. Built once per Query.
func (q *Query) freshCallBlocks(f *Func) []freshBlocks {
	if fb, ok := q.freshCallItems[f]; ok {
		return fb
	}
	fg := q.p.graph(f)
	byVar := map[*types.Var]freshBlocks{}
	for bi, evs := range fg.events {
		for _, e := range evs {
			if e.call == nil {
				continue
			}
			items := map[*types.Var]*freshItem{}
			for _, k := range q.callAnyKeys(e.call) {
				v := q.freshRoot(f, e, k)
				if v == nil {
					continue
				}
				if items[v] == nil {
					items[v] = &freshItem{pos: e.pos, e: e}
				}
				items[v].keys = append(items[v].keys, k)
			}
			for v, it := range items {
				if byVar[v] == nil {
					byVar[v] = freshBlocks{}
				}
				byVar[v][int32(bi)] = append(byVar[v][int32(bi)], *it)
			}
		}
	}
	vars := slices.SortedFunc(maps.Keys(byVar), func(a, b *types.Var) int { return cmp.Compare(a.Pos(), b.Pos()) })
	out := make([]freshBlocks, 0, len(vars))
	for _, v := range vars {
		out = append(out, fg.withDefs(byVar[v], f.fresh[v]))
	}
	q.freshCallItems[f] = out
	return out
}

// callAnyKeys are the tracked keys needing no matching that a call's
// callees reach, each once, in order.
func (q *Query) callAnyKeys(s *callSite) []Key {
	var out []Key
	for _, h := range s.callees {
		for _, k := range q.sums[h].any {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}
