package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/leakscope/leakscope/internal/gosym"
)

// A goroutine may hold what another waits on though none of its frames
// prints a pointer to it: a closure keeps what it captured in its
// context, which no traceback shows; goroutines one call started share
// what that call passed them; a package-level Cond, channel or
// WaitGroup is reachable from any goroutine. These possible holders are found from the frames'
// function names and creators alone, never from source text.

// holderNote is one possible holder of what a goroutine waits on, or one
// ruled out, with the reason. Its words are put together only when
// written (String): most notes are never read.
type holderNote struct {
	y   *waitGor
	rel holderRel // how it may hold the waiter's object
	// live is set for a possible holder that can run; one ruled out
	// says why it cannot (cannotRun).
	live bool
}

func (h holderNote) String() string {
	status := "can run: "
	if !h.live {
		status = cannotRun(h.y)
	}
	return fmt.Sprintf("goroutine %d (%s, %s, %s%s)", h.y.goid, holderEntry(h.y), h.rel, status, h.y.state)
}

// holderRel is how a possible holder relates to a waiter: the index that
// found it.
type holderRel struct {
	kind holderKind
	fn   string // the creator (relCreatorClosure, relSibling) or frame function (relFrameClosure)
	goid int64  // the goroutine that started both (relSibling)
	obj  uint64 // the package-level object (relGlobal)
	expr string // the object's expression (relOpaque)
}

// holderKind is which index found a possible holder.
type holderKind int8

const (
	relCreatorClosure holderKind = iota // a closure of the waiter's creator
	relSibling                          // started by the same call
	relFrameClosure                     // a closure of a function on the waiter's stack
	relGlobal                           // anyone can reach a package-level object
	relOpaque                           // runs code not read, to which the object was given
)

func (r holderRel) String() string {
	switch r.kind {
	case relCreatorClosure:
		return "a closure of " + r.fn + ", which started them"
	case relSibling:
		return fmt.Sprintf("started by the same %s in goroutine %d", r.fn, r.goid)
	case relFrameClosure:
		return "a closure of " + r.fn + ", on their stack"
	case relOpaque:
		return fmt.Sprintf("runs %s, whose source is not read, and %s was given to or made by code not read", r.fn, r.expr)
	}
	return fmt.Sprintf("any goroutine can reach the package-level %#x", r.obj)
}

// maxHolderNotes bounds the possible and ruled-out holders kept per
// goroutine for the evidence.
const maxHolderNotes = 3

// holderIndex finds a parked goroutine's possible holders.
type holderIndex struct {
	// byClosure maps a function to the goroutines running a closure it
	// created (entry or frame "F.func1", "F.func2.1").
	byClosure map[string]*holderList
	// byCreator maps a creator (function and goroutine) to the goroutines
	// it started.
	byCreator map[creatorKey]*holderList
	// app are the program's goroutines, for package-level objects.
	app *holderList
}

// holderList is one list of possible holders, in goid order, split into
// those that can run (live) and the rest, so a waiter that needs only a
// few of the rest as notes stops early. runEnd[p] is where the run of
// rest[p]'s co-waiters (parked at one site in one kind) ends.
type holderList struct {
	live, rest []*waitGor
	runEnd     []int
}

// newHolderList splits ys, which the fixpoint has reached or not. In a
// list of closures (closures), a long sleeper can hold: it wakes, and
// then runs a body that captured the waiters' objects.
func newHolderList(ys []*waitGor, closures bool) *holderList {
	hl := &holderList{}
	for _, y := range ys {
		if canHold(y) || closures && y.class == classLive && y.state == "sleep" {
			hl.live = append(hl.live, y)
		} else {
			hl.rest = append(hl.rest, y)
		}
	}
	hl.runEnd = make([]int, len(hl.rest))
	for p := len(hl.rest) - 1; p >= 0; p-- {
		hl.runEnd[p] = p + 1
		if q := p + 1; q < len(hl.rest) && coParked(hl.rest[p], hl.rest[q]) {
			hl.runEnd[p] = hl.runEnd[q]
		}
	}
	return hl
}

// canHold reports a goroutine that can run, or that one able to run
// reaches: a possible holder that can still act.
func canHold(y *waitGor) bool { return y.class == classLive && !y.idle || y.reach == reachMention }

// coParked reports two goroutines parked at one site in one kind.
func coParked(a, b *waitGor) bool {
	return a.class == classParked && b.class == classParked && a.site == b.site && a.kind == b.kind
}

type creatorKey struct {
	fn   string
	goid int64
}

// declaredIn is the function whose code fn is part of: the function a
// closure or a go or defer statement's wrapper is declared in, "" for a
// function that is neither.
func declaredIn(fn string) string {
	if gosym.Wrapper(fn) {
		return fn[:strings.LastIndexByte(fn, '.')]
	}
	return gosym.ClosureParent(fn)
}

// newHolderIndex indexes the goroutines of the program (not machinery).
func (w *waitGraph) newHolderIndex() *holderIndex {
	byClosure, byCreator := map[string][]*waitGor{}, map[creatorKey][]*waitGor{}
	var app []*waitGor
	parents := map[int64][]string{} // per stack
	for _, y := range w.gs {
		if y.class == classInfra {
			continue
		}
		app = append(app, y)
		ps, ok := parents[y.stack]
		if !ok {
			for _, f := range w.framesOf(y.stack) {
				if p := gosym.ClosureParent(f.Function); p != "" && !containsStr(ps, p) {
					ps = append(ps, p)
				}
			}
			parents[y.stack] = ps
		}
		for _, p := range ps {
			byClosure[p] = append(byClosure[p], y)
		}
		if y.site != nil && y.site.creator != "" {
			k := creatorKey{y.site.creator, y.creator}
			byCreator[k] = append(byCreator[k], y)
		}
	}
	ix := &holderIndex{byClosure: map[string]*holderList{}, byCreator: map[creatorKey]*holderList{}, app: newHolderList(app, false)}
	for k, ys := range byClosure {
		ix.byClosure[k] = newHolderList(ys, true)
	}
	for k, ys := range byCreator {
		ix.byCreator[k] = newHolderList(ys, false)
	}
	return ix
}

// findHolders gives every parked goroutine nothing able to run points to
// its possible holders that can run, and those it ruled out (parked, or
// idle) with why.
func (w *waitGraph) findHolders() {
	ix := w.newHolderIndex()
	for _, x := range w.gs {
		if x.class != classParked || x.reach == reachMention || x.site == nil || x.selfHeld != "" {
			continue
		}
		if x.prog != nil {
			w.opaqueHolders(x)
			continue
		}
		x.seenBy = x
		if c := x.site.creator; c != "" {
			x.considerHolders(ix.byClosure[c], holderRel{kind: relCreatorClosure, fn: c})
			x.considerHolders(ix.byCreator[creatorKey{c, x.creator}], holderRel{kind: relSibling, fn: c, goid: x.creator})
		}
		for _, f := range x.site.frames {
			if !isRuntime(f.Function) {
				x.considerHolders(ix.byClosure[f.Function], holderRel{kind: relFrameClosure, fn: f.Function})
			}
		}
		// Anyone can Signal a package-level Cond, send on or close a
		// package-level channel or call Done; only its holder releases
		// a lock, and a holder that can run shows as a lock handed on.
		if x.block.obj != 0 && x.block.obj < staticLimit && x.kind != "lock" && x.kind != "rlock" {
			x.considerHolders(ix.app, holderRel{kind: relGlobal, obj: x.block.obj})
		}
	}
}

// opaqueHolders notes, for a waiter the program decides whose object was
// given to (or made by) code not read, the goroutines that can run and
// run such code: that code may release it.
func (w *waitGraph) opaqueHolders(x *waitGor) {
	if x.prog.opaque == "" {
		return
	}
	for _, y := range w.gs {
		if len(x.possible) >= maxHolderNotes {
			return
		}
		if y == x || y.class != classLive || w.isDumping(y) {
			continue
		}
		if u := w.futureOf(y).Unknown; u != "" {
			x.possible = append(x.possible, holderNote{y: y, rel: holderRel{kind: relOpaque, fn: u, expr: x.prog.opaque}, live: true})
		}
	}
}

// considerHolders notes the possible holders of x's object in hl, found
// as rel says, until x's notes are full. A goroutine is noted once per
// waiter (seenBy), whichever list finds it first.
func (x *waitGor) considerHolders(hl *holderList, rel holderRel) {
	if hl == nil {
		return
	}
	for _, y := range hl.live {
		if len(x.possible) >= maxHolderNotes {
			break // the rest could add no note
		}
		if y.seenBy != x {
			y.seenBy = x
			if y.class == classParked && y.kind == x.kind && y.site == x.site {
				continue // a co-waiter a goroutine able to run reaches
			}
			if x.possible == nil {
				x.possible = make([]holderNote, 0, maxHolderNotes)
			}
			x.possible = append(x.possible, holderNote{y: y, rel: rel, live: true})
		}
	}
	for p := 0; p < len(hl.rest); {
		if len(x.ruledOut) >= maxHolderNotes && len(x.parkedHolders) >= maxParkedHolders {
			return // the rest could add no note
		}
		y := hl.rest[p]
		if y.class == classParked && y.kind == x.kind && y.site == x.site {
			p = hl.runEnd[p] // co-waiters: they wait for the same thing
			continue
		}
		p++
		if y.seenBy == x {
			continue
		}
		y.seenBy = x
		if len(x.ruledOut) < maxHolderNotes {
			if x.ruledOut == nil {
				x.ruledOut = make([]holderNote, 0, maxHolderNotes)
			}
			x.ruledOut = append(x.ruledOut, holderNote{y: y, rel: rel})
		}
		if y.class == classParked && len(x.parkedHolders) < maxParkedHolders {
			if x.parkedHolders == nil {
				x.parkedHolders = make([]*waitGor, 0, maxParkedHolders)
			}
			x.parkedHolders = append(x.parkedHolders, y)
			if rel.kind == relGlobal {
				x.anyHolders = append(x.anyHolders, y)
			}
		}
	}
}

// holderEntry names a possible holder by its entry function.
func holderEntry(y *waitGor) string {
	if y.site != nil {
		return y.site.entry
	}
	return "?"
}

// maxParkedHolders bounds the parked possible holders kept per goroutine.
const maxParkedHolders = 8

// possibleLockChan joins a lock waiter whose lock no frame shows held and
// a goroutine parked on a channel operation that no frame shows served,
// when each is a possible holder of the other's object (a closure or
// sibling of the same call): the holder is blocked on a send or receive
// whose partner waits for the lock. The pair becomes a wait-for cycle
// (lock-chan-cycle), marked possible in its evidence, rather than a lock
// "never released" beside a separate send with no receiver.
func (w *waitGraph) possibleLockChan() {
	for _, x := range w.gs {
		if x.class != classParked || x.kind != "lock" && x.kind != "rlock" || len(x.wakers) > 0 || x.reach == reachMention || x.selfHeld != "" || x.prog != nil {
			continue
		}
		for _, y := range x.parkedHolders {
			switch y.kind {
			case "chan send", "chan receive", "select":
			default:
				continue
			}
			if y.prog != nil || y.reach == reachMention || slices.ContainsFunc(y.wakers, func(z *waitGor) bool { return z != x }) || !slices.Contains(y.parkedHolders, x) {
				continue
			}
			if len(x.objs) > 0 && pointsInto(y, x.objs[0]) || slices.Contains(y.anyHolders, x) {
				// y holds a pointer into the struct the lock heads (a
				// singleflight.Group beside the mutex), or x could
				// serve y's channel only as any goroutine can reach a
				// package-level one: y holds the lock while it blocks,
				// and nothing shows x serving its channel. Held while
				// blocked, not a cycle.
				x.wakers = append(x.wakers, y)
				continue
			}
			x.wakers = append(x.wakers, y)
			if !slices.Contains(y.wakers, x) {
				y.wakers = append(y.wakers, x)
			}
			x.possibleCycle, y.possibleCycle = true, true
		}
	}
}

// pointsInto reports whether one of y's words points into the struct
// that starts at a lock's address (within objectSlack above it).
func pointsInto(y *waitGor, lock uint64) bool {
	if lock < staticLimit {
		return false
	}
	for _, v := range y.words {
		if v > lock && v-lock < objectSlack {
			return true
		}
	}
	return false
}

// cannotRun says why a goroutine is ruled out as a waker, before its
// state.
func cannotRun(y *waitGor) string {
	if y.class == classLive {
		return "idle: "
	}
	return "parked in "
}

func containsStr(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// holderNotes words a few holders for evidence texts.
func holderNotes(hs []holderNote) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = h.String()
	}
	return strings.Join(parts, "; ")
}
