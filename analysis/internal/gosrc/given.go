package gosrc

import (
	"sync"
)

// What a goroutine was given. An object of a class that does not escape
// reaches a goroutine's frames only through what its go statement handed
// it (the entry's parameters and the variables its literals capture) or
// by being made on that goroutine. Within the goroutine, a value it was
// given moves from frame to frame only down calls (as an argument), into
// the literals a frame writes (as a captured variable), and up returns
// of what went down. So a function's frame can hold a given object of
// class c only when
//
//   - it is a go statement's function, or a literal reached from what a
//     go statement or code not read is handed (it may run on the
//     goroutine it was handed to), and its inputs lead to c;
//   - it is called from a frame that can, and its parameters lead to c;
//   - it is a literal written in a frame that can, and what it captures
//     leads to c;
//   - or no call of it is read, and its inputs lead to c.
//
// Otherwise every object of class c its frame holds was made on its own
// goroutine: a go statement there hands on what its goroutine made.

// givenIndex is what Given reads, built on first use.
type givenIndex struct {
	once sync.Once
	// callers are the read call sites of each function; started marks
	// a go statement's functions.
	callers map[*Func][]*Func
	started map[*Func]bool
	// handed are the literals reached from what go statements and code
	// not read are handed (one walk, bounded only by the program).
	handed map[*Func]bool

	mu     sync.Mutex
	params map[*Func]Reach
	caps   map[*Func]Reach
	memo   map[givenKey]bool
}

// givenKey is one question: class, function.
type givenKey struct {
	c node
	f *Func
}

// Given reports whether the frame of the function a frame runs may hold
// an object of class c that its goroutine was given when started,
// rather than one the goroutine made. ok is false when the function is
// not read.
func (p *Program) Given(fr Frame, c Class) (given, ok bool) {
	f, _ := p.FuncAt(fr.Function, fr.File, fr.Line)
	if f == nil || !c.Valid() {
		return true, f != nil
	}
	return p.given(f, p.flow.cl.find(c.n)), true
}

// given searches back from f, over the edges along which a given object
// of class c can move, for a function that holds one from the start.
func (p *Program) given(f *Func, c node) bool {
	gi := p.givenIndex()
	gi.mu.Lock()
	defer gi.mu.Unlock()
	if v, ok := gi.memo[givenKey{c, f}]; ok {
		return v
	}
	seen := map[*Func]bool{f: true}
	queue := []*Func{f}
	found := false
	for len(queue) > 0 && !found {
		g := queue[0]
		queue = queue[1:]
		if v, ok := gi.memo[givenKey{c, g}]; ok {
			found = v
			break
		}
		if p.givenAtStart(gi, g, c) {
			found = true
			break
		}
		for _, from := range p.givenFrom(gi, g, c) {
			if !seen[from] {
				seen[from] = true
				queue = append(queue, from)
			}
		}
	}
	if found {
		gi.memo[givenKey{c, f}] = true
		return true
	}
	for g := range seen { // none of f's sources holds one: nor do they
		gi.memo[givenKey{c, g}] = false
	}
	return false
}

// givenAtStart reports a function that may hold a given object of class
// c however it is reached: a go statement's function, a literal handed
// to another goroutine, or one no read call reaches, whose inputs lead to
// c.
func (p *Program) givenAtStart(gi *givenIndex, g *Func, c node) bool {
	handed := g.lit != nil && gi.handed[g]
	uncalled := len(gi.callers[g]) == 0 && g.lit == nil
	if !gi.started[g] && !handed && !uncalled {
		return false
	}
	return p.reachCached(gi.params, g, false).has(c) || p.reachCached(gi.caps, g, true).has(c)
}

// givenFrom lists the functions a given object of class c can reach g
// from: its callers, when its parameters lead to c, and the function a
// literal is written in, when what it captures does.
func (p *Program) givenFrom(gi *givenIndex, g *Func, c node) []*Func {
	var out []*Func
	if p.reachCached(gi.params, g, false).has(c) {
		out = append(out, gi.callers[g]...)
	}
	if g.parent != nil && p.reachCached(gi.caps, g, true).has(c) {
		out = append(out, g.parent)
	}
	return out
}

// reachCached is what a function's parameters (or, captured, the
// variables it captures) lead to, walked once.
func (p *Program) reachCached(m map[*Func]Reach, f *Func, captured bool) Reach {
	if r, ok := m[f]; ok {
		return r
	}
	var r Reach
	if captured {
		r = p.reachOf(p.flow.captured[f])
	} else if f.sig != nil {
		r = p.reachOf(sigParams(f.sig, true))
	}
	m[f] = r
	return r
}

// givenIndex builds the index on first use.
func (p *Program) givenIndex() *givenIndex {
	p.gifts.once.Do(func() { p.buildGiven(&p.gifts) })
	return &p.gifts
}

// buildGiven indexes the read calls by callee and the literals handed to
// other goroutines.
func (p *Program) buildGiven(gi *givenIndex) {
	fl := p.flow
	gi.callers, gi.started = map[*Func][]*Func{}, map[*Func]bool{}
	gi.params, gi.caps, gi.memo = map[*Func]Reach{}, map[*Func]Reach{}, map[givenKey]bool{}
	var handedFrom []*Func
	for _, s := range fl.sites {
		if s.caller == nil {
			continue
		}
		for _, f := range s.callees {
			if s.kind == callGo {
				gi.started[f] = true
				handedFrom = append(handedFrom, f)
				continue
			}
			gi.callers[f] = append(gi.callers[f], s.caller)
		}
	}
	for _, f := range fl.callbacks {
		gi.started[f] = true
		handedFrom = append(handedFrom, f)
	}
	w := p.newReachWalk(true)
	for _, f := range handedFrom {
		for _, v := range p.inputVars(f) {
			w.addVar(v, 0)
		}
	}
	gi.handed = w.funcs
}
