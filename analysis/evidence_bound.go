package analysis

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/leakscope/leakscope/analysis/internal/gosrc"
)

// Bounded releases. A goroutine that can run may release a class of
// objects (every instance of a struct field is one class) though it can
// reach only a few of them: each of its releases acts on an object its
// frames' parameters lead to through fields only composite literals set
// ([gosrc.Cap] Objects). When the class's waiters wait on more distinct
// objects than all such goroutines together reach, and nothing else can
// release the class, at least the waiters beyond the most-waited-on of
// those objects stay parked for good, whichever objects are released.
// The fixpoint defers these releases by class, then either makes them as
// it would have (the bound does not hold) or leaves the waiters parked
// with the bound.

// boundLedger holds the deferred releases by class.
type boundLedger struct {
	byClass map[int32]*classBound
	failed  map[int32]bool // classes whose bound does not hold: released as usual
}

// classBound is one class's deferred releases: each waker with the
// objects of the class its releases can act on.
type classBound struct {
	class    gosrc.Class
	wakers   []*waitGor
	objects  map[*waitGor][]string
	deferred []deferredRelease
	// bound and cands are the bound and its waiters as last resolved.
	bound *waitBound
	cands []*waitGor
}

// waitBound is what a waiter left parked under a bound is told.
type waitBound struct {
	wakers  []*waitGor
	reach   int // objects the wakers reach together, at most
	waited  int // distinct objects the class's waiters wait on
	waiters int
	stuck   int // waiters parked for good, at least
	names   []string
}

// deferBounded records release cp of goroutine y instead of making it
// when it is bounded and no code not read is given the class (code not
// read that y runs cannot reach its objects then). A release acting only
// on an object the goroutine's current call made (Cap.Fresh) is made:
// it is already exact.
func (w *waitGraph) deferBounded(y *waitGor, cp gosrc.Cap) bool {
	c := w.prog.p.KeyClass(cp.Key)
	if !cp.Bounded || len(cp.Objects) == 0 || c.Opaque() || cp.Fresh > 0 {
		return false
	}
	if w.bounds == nil {
		w.bounds = &boundLedger{byClass: map[int32]*classBound{}, failed: map[int32]bool{}}
	}
	if w.bounds.failed[c.ID()] {
		return false
	}
	cb := w.bounds.byClass[c.ID()]
	if cb == nil {
		cb = &classBound{class: c, objects: map[*waitGor][]string{}}
		w.bounds.byClass[c.ID()] = cb
	}
	if _, ok := cb.objects[y]; !ok {
		cb.wakers = append(cb.wakers, y)
	}
	for _, o := range cp.Objects {
		if !slices.Contains(cb.objects[y], o) {
			cb.objects[y] = append(cb.objects[y], o)
		}
	}
	cb.deferred = append(cb.deferred, deferredRelease{y, cp})
	return true
}

// deferredRelease is one release deferred.
type deferredRelease struct {
	y  *waitGor
	cp gosrc.Cap
}

// resolveBounds checks each class's deferred releases once the fixpoint
// has settled: where the bound does not hold, the releases are made as
// they would have been, and the class is released as usual from then.
func (w *waitGraph) resolveBounds(ix *wakeIndex, queue []*waitGor) []*waitGor {
	if w.bounds == nil {
		return queue
	}
	waiters, parked := w.waitersByClass(ix), w.parkedReleases()
	for _, id := range slices.Sorted(maps.Keys(w.bounds.byClass)) {
		cb := w.bounds.byClass[id]
		b, ok := w.boundOf(cb, waiters[id], parked[id])
		if ok {
			cb.bound, cb.cands = b, waiters[id]
			continue
		}
		delete(w.bounds.byClass, id)
		w.bounds.failed[id] = true
		for _, d := range cb.deferred {
			queue = w.wakeCap(ix, d.y, d.cp, queue)
		}
	}
	return queue
}

// markBounds gives the waiters of each class whose bound holds the
// bound: the last resolveBounds, after which nothing more woke, left it.
func (w *waitGraph) markBounds() {
	if w.bounds == nil {
		return
	}
	for _, cb := range w.bounds.byClass {
		for _, x := range cb.cands {
			x.bound = cb.bound
		}
	}
}

// waitersByClass lists, by class, the decided waiters not reached whose
// wait a release of the class ends, in goid order.
func (w *waitGraph) waitersByClass(ix *wakeIndex) map[int32][]*waitGor {
	out := map[int32][]*waitGor{}
	for _, x := range w.gs {
		if x.class != classParked || x.prog == nil || x.reach == reachMention {
			continue
		}
		var seen []int32
		for _, k := range x.prog.keys {
			id := w.prog.p.KeyClass(k).ID()
			if ix.byKey[k] != nil && !slices.Contains(seen, id) {
				seen = append(seen, id)
				out[id] = append(out[id], x)
			}
		}
	}
	return out
}

// boundOf is the bound a class's deferred releases set on its waiters
// cands: it holds when no goroutine left parked could release the class
// once woken (parked), every waiter's object is told apart by the dump
// (all by address, or all by a root of one type: see rootsOf), and the
// objects the wakers reach are fewer than those waited on.
func (w *waitGraph) boundOf(cb *classBound, cands []*waitGor, parked bool) (*waitBound, bool) {
	if len(cands) == 0 || parked {
		return nil, false
	}
	byObj := w.waitedObjects(cands, cb.class)
	if byObj == nil {
		return nil, false
	}
	reach := 0
	for _, y := range cb.wakers {
		reach += len(cb.objects[y])
	}
	counts := slices.Sorted(maps.Values(byObj))
	slices.Reverse(counts)
	woken := 0
	for i := 0; i < reach && i < len(counts); i++ {
		woken += counts[i]
	}
	if woken >= len(cands) {
		return nil, false
	}
	return &waitBound{wakers: cb.wakers, reach: reach, waited: len(byObj), waiters: len(cands), stuck: len(cands) - woken,
		names: cb.class.Names()}, true
}

// waitedObjects counts the waiters by the object each waits on, told
// apart by one kind of fact for all: the address their frames print,
// or else a root of one named type (a printed pointer to a struct that
// leads to it: see rootsOf); nil when the dump tells them apart by
// neither.
func (w *waitGraph) waitedObjects(cands []*waitGor, c gosrc.Class) map[uint64]int {
	byAddr := map[uint64]int{}
	for _, x := range cands {
		if x.prog.addr == 0 {
			byAddr = nil
			break
		}
		byAddr[x.prog.addr]++
	}
	if byAddr != nil {
		return byAddr
	}
	byRoot, typ := map[uint64]int{}, ""
	for _, x := range cands {
		roots := w.rootsOf(x, c)
		if len(roots) == 0 || typ != "" && roots[0].typ != typ {
			return nil
		}
		typ = roots[0].typ
		byRoot[roots[0].v]++
	}
	return byRoot
}

// parkedReleases are the classes some goroutine left parked releases
// in its future: woken through another, it could release more of them
// than a bound counts.
func (w *waitGraph) parkedReleases() map[int32]bool {
	out := map[int32]bool{}
	for _, x := range w.gs {
		if x.class != classParked || x.reach == reachMention {
			continue
		}
		for _, cp := range w.futureOf(x).Caps { // a future's caps are tracked releases
			out[w.prog.p.KeyClass(cp.Key).ID()] = true
		}
	}
	return out
}

// String says what the bound rests on and what it leaves parked.
func (b *waitBound) String() string {
	var who []string
	for i, y := range b.wakers {
		if i == maxHolderNotes {
			who = append(who, fmt.Sprintf("%d more", len(b.wakers)-i))
			break
		}
		who = append(who, fmt.Sprintf("goroutine %d (%s, %s)", y.goid, holderEntry(y), y.state))
	}
	what := "objects"
	if len(b.names) > 0 {
		what = strings.Join(b.names, ", ")
	}
	verb := "reach one, and together they can"
	if len(b.wakers) == 1 {
		verb = "reaches one, and it can"
	}
	return fmt.Sprintf("of the goroutines that can still run, only %s %s act on at most %d of the %d %s these %d goroutines wait on (each through its frames' parameters and fields only composite literals set, read from the program as Go): at least %d of the %d stay parked for good, whichever are released",
		strings.Join(who, ", "), verb, b.reach, b.waited, what, b.waiters, b.stuck, b.waiters)
}
