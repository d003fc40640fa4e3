package gosrc

import (
	"fmt"
	"go/types"
	"slices"
	"strings"
)

// Origins. What a function's operations of one kind act on, in terms of
// its parameters: Put's q.cond.Signal() acts on the cond of what its
// receiver points to, and HelperSignals' rq.queue.Put() on the cond of
// what rq.queue holds. A frame whose operations all have origins acts on
// at most as many objects as it has distinct ones (frameObjects); a call
// whose origins all start at a local not yet defined acts on none made
// before (freshcall.go).

// origin is an object a function's operation acts on: the one reached
// from its parameter param (the receiver first) through fields.
type origin struct {
	param  int
	fields []*types.Var
}

// origins are the objects a function's operations of one key act on,
// through the calls it makes; unknown when one of them is not an
// origin (a global, a local, a field that is written again, …).
type origins struct {
	list    []origin
	unknown bool
}

// maxOrigins bounds the origins kept per function and key.
const maxOrigins = 16

// originKey indexes the origins computed.
type originKey struct {
	f *Func
	k Key
}

// originsOf are the origins of g's operations of key k (a release that
// needs matching counts wherever it is: its origin bounds the objects
// whether or not an acquire before it matches it). A call cycle through
// g is unknown.
func (q *Query) originsOf(g *Func, k Key) origins {
	key := originKey{g, k}
	if o, ok := q.origins[key]; ok {
		return o
	}
	q.origins[key] = origins{unknown: true} // while computed: a cycle is not known
	o := q.computeOrigins(g, k)
	q.origins[key] = o
	return o
}

// computeOrigins reads g's events of key k and its calls that reach it.
func (q *Query) computeOrigins(g *Func, k Key) origins {
	if g.sig == nil {
		return origins{unknown: true}
	}
	p := q.p
	params := sigParams(g.sig, true)
	var out origins
	add := func(path accessPath) {
		o, ok := p.paramOrigin(params, path)
		if !ok || len(out.list) >= maxOrigins {
			out.unknown = true
			return
		}
		out.list = append(out.list, o)
	}
	for _, e := range g.events {
		if e.call == nil {
			if e.op != OpNone && KeyOf(p.class(e.obj), e.op) == k && !p.freshOp(g, e) {
				add(e.path)
			}
			continue
		}
		paths, ok := q.callPaths(e.call, k)
		if !ok {
			return origins{unknown: true}
		}
		for _, path := range paths {
			add(path)
		}
		if out.unknown {
			return out
		}
	}
	return out
}

// extend is the path with more fields selected.
func (a accessPath) extend(fields []*types.Var) accessPath {
	if a.root == nil || len(a.fields)+len(fields) > maxPathFields {
		return accessPath{}
	}
	return accessPath{root: a.root, fields: append(append([]*types.Var(nil), a.fields...), fields...)}
}

// paramOrigin is a path as an origin: rooted at one of params that no
// statement assigns, through stable fields.
func (p *Program) paramOrigin(params []*types.Var, path accessPath) (origin, bool) {
	if path.root == nil || !p.fixed(path.root) || !p.stablePath(path.fields) {
		return origin{}, false
	}
	i := slices.Index(params, path.root)
	return origin{param: i, fields: path.fields}, i >= 0
}

// callPaths are the objects of key k a call can act on, as paths from
// the caller's variables: each origin of each callee reaching k, from
// the argument the call passes for its parameter. ok is false when one
// of them is not so written.
func (q *Query) callPaths(s *callSite, k Key) (paths []accessPath, ok bool) {
	for _, h := range s.callees {
		if sum := q.sums[h]; !slices.Contains(sum.any, k) && !slices.Contains(sum.unmatched, k) {
			continue
		}
		sub := q.originsOf(h, k)
		if sub.unknown {
			return nil, false
		}
		for _, o := range sub.list {
			ap, ok := argPath(s, h, o.param)
			full := ap.extend(o.fields)
			if !ok || full.root == nil {
				return nil, false
			}
			paths = append(paths, full)
		}
	}
	return paths, true
}

// argPath is the argument a call passes for h's parameter i (the
// receiver first), when the call passes it as written.
func argPath(s *callSite, h *Func, i int) (accessPath, bool) {
	if h.sig == nil || s.recv != (h.sig.Recv() != nil) || i >= len(s.argPaths) {
		return accessPath{}, false
	}
	if h.sig.Variadic() && i >= len(sigParams(h.sig, true))-1 {
		return accessPath{}, false // packed into a slice
	}
	ap := s.argPaths[i]
	return ap, ap.root != nil
}

// frameObjects names the objects of key k that event e of frame i,
// running f, can act on: each origin of it rooted at one of f's
// parameters, or of the variables its literal captures, that no
// statement assigns (one value for the whole frame), as "frame i, root
// j, fields". bounded is false when one is not so rooted.
func (q *Query) frameObjects(f *Func, e event, k Key, i int) (objs []string, bounded bool) {
	if f.sig == nil {
		return nil, false
	}
	params := q.p.inputVars(f)
	add := func(path accessPath) bool {
		o, ok := q.p.paramOrigin(params, path)
		if !ok {
			return false
		}
		name := objectName(i, o)
		if !slices.Contains(objs, name) {
			objs = append(objs, name)
		}
		return true
	}
	if e.call == nil {
		return objs, add(e.path)
	}
	paths, ok := q.callPaths(e.call, k)
	if !ok {
		return nil, false
	}
	for _, path := range paths {
		if !add(path) {
			return nil, false
		}
	}
	return objs, len(objs) > 0
}

// objectName names an origin of frame i for Cap.Objects.
func objectName(i int, o origin) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d.%d", i, o.param)
	for _, f := range o.fields {
		b.WriteString("." + f.Name())
	}
	return b.String()
}
