package gosrc

import (
	"go/token"
	"slices"
	"sort"

	"golang.org/x/tools/go/cfg"
)

// A walk follows a function's control-flow graph from a point and
// collects the tracked operations it reaches: every channel, Cond and
// context operation (and what the calls reach), and the releases of a
// lock or WaitGroup that no acquire before them on the same path
// matches (a goroutine holds a lock when the rest of its frames unlock
// it without locking it first). Calls contribute their callees'
// summaries: Summary.any and Summary.unmatched.

// summary is what a function and everything it calls can do, of the
// tracked operations.
type summary struct {
	any       []Key // operations that need no matching (sends, closes, …)
	unmatched []Key // releases not matched by an acquire inside it
}

// blockEvents returns f's events by live block, in order.
func (p *Program) blockEvents(f *Func) [][]event { return p.graph(f).events }

// start is where a walk begins: a block and the index of its first
// event to take.
type start struct {
	block *cfg.Block
	idx   int
	// pos is where the frame's statement begins (NoPos: at event idx):
	// a definition there has not run yet.
	pos token.Pos
}

// reachAny collects the tracked operations that need no matching, from
// the starts on: the events of the blocks reached and their callees'
// summaries, but those on f's fresh locals (reachCurrent takes them).
// emit gets each with its event.
func (q *Query) reachAny(f *Func, starts []start, emit func(Key, event)) {
	evs := q.p.blockEvents(f)
	seen := map[int32]bool{}
	var visit func(b *cfg.Block, from int)
	visit = func(b *cfg.Block, from int) {
		for _, e := range evs[b.Index][from:] {
			if q.kept(e) && !q.p.freshOp(f, e) {
				q.anyOf(e, emit)
			}
		}
		for _, s := range b.Succs {
			if !seen[s.Index] {
				seen[s.Index] = true
				visit(s, 0)
			}
		}
	}
	for _, s := range starts {
		visit(s.block, s.idx)
	}
}

// reachCurrent collects the tracked operations on f's fresh locals that
// the starts reach before the path defines their variable again: those
// act on the objects the locals hold now; after a definition, on new
// ones no goroutine waits on yet. The calls acting only through a fresh
// local (freshCallBlocks) count the same way.
func (q *Query) reachCurrent(f *Func, starts []start, emit func(Key, event)) {
	for _, defs := range append(slices.Clip(q.p.graph(f).fresh), q.freshCallBlocks(f)...) {
		type state struct {
			b       int32
			defined bool
		}
		seen := map[state]bool{}
		var visit func(b *cfg.Block, at token.Pos, defined bool)
		visit = func(b *cfg.Block, at token.Pos, defined bool) {
			for _, it := range defs.in(b.Index, at) {
				if it.def {
					defined = true
				} else if !defined && q.kept(it.e) {
					q.emitItem(it, emit)
				}
			}
			for _, s := range b.Succs {
				if st := (state{s.Index, defined}); !seen[st] {
					seen[st] = true
					visit(s, 0, defined) // a whole block
				}
			}
		}
		for _, s := range starts {
			at := s.pos
			if at == token.NoPos {
				at = q.p.startPos(f, s)
			}
			visit(s.block, at, false)
		}
	}
}

// emitItem emits a fresh local's operation, or the keys a call acts on
// through it.
func (q *Query) emitItem(it freshItem, emit func(Key, event)) {
	if it.keys == nil {
		q.anyOf(it.e, emit)
		return
	}
	for _, k := range it.keys {
		emit(k, it.e)
	}
}

// anyOf emits an event's operation (when tracked and of a kind that
// needs no matching) or its callees' any-summaries.
func (q *Query) anyOf(e event, emit func(Key, event)) {
	if e.call == nil {
		if acquireOf(e.op) == OpNone && e.op != OpNone {
			if k := KeyOf(q.p.class(e.obj), e.op); q.tracked[k] {
				emit(k, e)
			}
		}
		return
	}
	for _, g := range e.call.callees {
		for _, k := range q.sums[g].any {
			emit(k, e)
		}
	}
}

// reachUnmatched collects the releases of class-matched operations
// reachable from the starts with no acquire of the same class before
// them on the path; held says which classes are taken as acquired at
// the start (the lock a goroutine waits to take).
func (q *Query) reachUnmatched(f *Func, starts []start, held map[node]bool, emit func(Key, event)) {
	for _, c := range q.matchedClasses(f) {
		q.walkClass(f, starts, c, held[c], emit)
	}
}

// matchedClasses lists the tracked classes of f's acquires and releases
// and of its callees' unmatched releases.
func (q *Query) matchedClasses(f *Func) []node {
	set := map[node]bool{}
	for _, e := range f.events {
		if e.call == nil {
			if acquireOf(e.op) != OpNone || e.op == OpLock || e.op == OpRLock || e.op == OpAddPos {
				set[q.p.flow.cl.find(e.obj)] = true
			}
			continue
		}
		for _, g := range e.call.callees {
			for _, k := range q.sums[g].unmatched {
				set[q.p.KeyClass(k).n] = true
			}
		}
	}
	out := make([]node, 0, len(set))
	for c := range set {
		if q.trackedClass[c] {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// walkClass walks from the starts with one class's acquired state.
func (q *Query) walkClass(f *Func, starts []start, c node, held bool, emit func(Key, event)) {
	evs := q.p.blockEvents(f)
	type state struct {
		b    int32
		held bool
	}
	seen := map[state]bool{}
	var visit func(b *cfg.Block, from int, held bool)
	visit = func(b *cfg.Block, from int, held bool) {
		for _, e := range evs[b.Index][from:] {
			if q.kept(e) {
				held = q.stepClass(e, c, held, emit)
			}
		}
		for _, s := range b.Succs {
			if st := (state{s.Index, held}); !seen[st] {
				seen[st] = true
				visit(s, 0, held)
			}
		}
	}
	for _, s := range starts {
		visit(s.block, s.idx, held)
	}
}

// stepClass applies one event to class c's acquired state, emitting an
// unmatched release.
func (q *Query) stepClass(e event, c node, held bool, emit func(Key, event)) bool {
	if e.call != nil {
		for _, g := range e.call.callees {
			for _, k := range q.sums[g].unmatched {
				if q.p.KeyClass(k).n != c {
					continue
				}
				if !held {
					emit(k, e)
				}
				return false // the callee releases it
			}
		}
		return held
	}
	if q.p.flow.cl.find(e.obj) != c {
		return held
	}
	switch e.op {
	case OpLock, OpRLock, OpAddPos:
		return true
	case OpUnlock, OpRUnlock, OpDone, OpAdd:
		if !held {
			if k := KeyOf(Class{p: q.p, n: c}, e.op); q.tracked[k] {
				emit(k, e)
			}
		}
		return false
	}
	return held
}

// entry is the walk start of a function's body.
func (p *Program) entry(f *Func) []start {
	g := p.graph(f).g
	if len(g.Blocks) == 0 {
		return nil
	}
	return []start{{block: g.Blocks[0], idx: 0}}
}

// summarize computes every function's summary: one pass of Tarjan's
// strongly connected components over the call graph, each component
// walked again until its summaries stop growing (they only grow).
func (q *Query) summarize() {
	q.sums = map[*Func]*summary{}
	t := &tarjan{index: map[*Func]int{}, low: map[*Func]int{}, on: map[*Func]bool{}, done: q.finish}
	for _, f := range q.p.funcs.all {
		if _, ok := t.index[f]; !ok {
			t.visit(f)
		}
	}
}

// finish summarises one component (its callees outside it are done).
func (q *Query) finish(comp []*Func) {
	for _, g := range comp {
		q.sums[g] = &summary{}
	}
	for changed := true; changed; {
		changed = false
		for _, g := range comp {
			s := &summary{}
			anySet, unSet := map[Key]bool{}, map[Key]bool{}
			q.reachAny(g, q.p.entry(g), func(k Key, _ event) { anySet[k] = true })
			q.reachUnmatched(g, q.p.entry(g), nil, func(k Key, _ event) { unSet[k] = true })
			s.any, s.unmatched = sortedKeySet(anySet), sortedKeySet(unSet)
			if len(s.any) != len(q.sums[g].any) || len(s.unmatched) != len(q.sums[g].unmatched) {
				changed = true
			}
			q.sums[g] = s
		}
	}
}

func sortedKeySet(m map[Key]bool) []Key {
	out := make([]Key, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// tarjan finds the call graph's strongly connected components, calling
// done on each after the components it calls.
type tarjan struct {
	index, low map[*Func]int
	on         map[*Func]bool
	stack      []*Func
	next       int
	done       func([]*Func)
}

// visit is Tarjan's recursive step.
func (t *tarjan) visit(f *Func) {
	t.index[f], t.low[f] = t.next, t.next
	t.next++
	t.stack = append(t.stack, f)
	t.on[f] = true
	for _, e := range f.events {
		if e.call == nil {
			continue
		}
		for _, g := range e.call.callees {
			if _, ok := t.index[g]; !ok {
				t.visit(g)
				t.low[f] = min(t.low[f], t.low[g])
			} else if t.on[g] {
				t.low[f] = min(t.low[f], t.index[g])
			}
		}
	}
	if t.low[f] != t.index[f] {
		return
	}
	var comp []*Func
	for {
		g := t.stack[len(t.stack)-1]
		t.stack = t.stack[:len(t.stack)-1]
		t.on[g] = false
		comp = append(comp, g)
		if g == f {
			break
		}
	}
	t.done(comp)
}
