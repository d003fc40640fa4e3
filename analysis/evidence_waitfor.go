package analysis

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/leakscope/leakscope/analysis/internal/gosrc"
)

// gClass is what a goroutine can still do for the others.
type gClass int8

const (
	// classInfra: the runtime's own goroutines, the profiler serving the
	// dump, the test runner, signal delivery and a server's idle
	// connection plumbing. They hold nothing of the program's.
	classInfra gClass = iota
	// classLive: the goroutine can run: running, runnable, in a system
	// call, in IO wait, sleeping or waiting on a timer.
	classLive
	// classParked: parked on a channel, lock, WaitGroup, Cond or select
	// that only another goroutine can release.
	classParked
)

// How a parked goroutine can still be woken, as the wait-for fixpoint
// finds it.
const (
	reachNone    int8 = iota // nothing that can run references what it waits on
	reachFamily              // only its creator or a child that can run (or can be woken)
	reachMention             // a goroutine that can run (or can be woken) holds a pointer to it
)

// waitGor is a goroutine of the latest snapshot in the wait-for graph.
type waitGor struct {
	*gor
	classified
	objs  []uint64 // what it waits on, resolved to the objects the frames mention
	objAt []argRef // where each of objs was read (frame and parameter)
	// possible are goroutines that can run and may hold what it waits on
	// though no frame shows it (findHolders); ruledOut those of the same
	// kinds that cannot run.
	possible, ruledOut []holderNote
	// seenBy is the waiter whose possible holders findHolders last
	// looked at this goroutine for.
	seenBy *waitGor
	// parkedHolders are the possible holders that are parked; anyHolders
	// those among them found only because any goroutine can reach a
	// package-level object.
	parkedHolders, anyHolders []*waitGor
	// possibleCycle is set when a waker edge of its cycle comes from
	// possible holders, not from a frame's word (possibleLockChan).
	possibleCycle bool
	// signalled, when not empty, says how the Cond tickets of the
	// snapshot show its Cond being signalled (condProgress).
	signalled string
	reach     int8
	// wakers are the parked or live goroutines that hold a pointer to
	// what it waits on without waiting on it the same way.
	wakers []*waitGor
	scc    int // wait-for cycle id (0: in none)
	// tarjan is findCycles' state for it.
	tarjan struct {
		index, low int // 0: not visited yet
		on         bool
	}
	// viaChild is set when only a child that can run reaches it (a
	// parent waiting for its worker's result or Done).
	viaChild bool
	// selfHeld, for a lock waiter, says how its source shows that it
	// holds that lock itself ([sourceCode.heldBySelf]): only it could
	// release it, so nothing can wake it.
	selfHeld string
	// prog is its wait as the program read as Go shows it (nil when it
	// does not: the wait is decided from the frames' words).
	prog *progWait
	// wokeBy is the goroutine that reached it, wokeHow how (from the
	// program; "" for a pointer in the frames).
	wokeBy  *waitGor
	wokeHow string
	// bound is set on a waiter left parked although goroutines that can
	// run release its class: they reach too few objects of it to wake
	// every waiter (evidence_bound.go).
	bound *waitBound
}

// waitGraph is the wait-for reasoning over the latest snapshot.
type waitGraph struct {
	gs     []*waitGor
	byGoid map[int64]*waitGor
	// mentions maps an object to the goroutines whose frames hold it.
	mentions map[uint64][]*waitGor
	// children maps a goid to the goroutines it created.
	children map[int64][]*waitGor
	stacks   *stackTable
	// frames holds each stack's frames once ([waitGraph.framesOf]).
	frames map[int64][]Frame
	// liveApp counts the program's goroutines that can run; undecided
	// those taken as able to run only because their source cannot rule
	// out a timer case (not in liveApp: they block the all-asleep claim,
	// nothing more).
	liveApp   int
	undecided int
	// timerBound is the shortest wait, in minutes, of the goroutines
	// parked only because that wait rules out shorter timer cases (see
	// waitGor.timerBound); 0 when there are none. An all-asleep claim
	// holds only unless one of them has a longer timer case.
	timerBound int64
	// dumping says which goroutines take the dump (sending SIGQUIT, the
	// test runner's alarm) and why: they are not counted as able to run.
	dumping []string
	cycles  int
	// runtimeAsleep names the traceback the runtime printed on finding
	// all goroutines asleep (see [allAsleepMessage]); "" otherwise.
	runtimeAsleep string
	// prog is the program read as Go (nil when the bundle holds none of
	// its files).
	prog *wakeProgram
	// bounds are the releases deferred by class during the fixpoint
	// (evidence_bound.go).
	bounds *boundLedger
	// picked counts the objects each bounded release woke the waiters
	// of (evidence_instances.go).
	picked map[pickKey]int
}

// waitScene is what the whole snapshot tells about each goroutine's wait.
type waitScene struct {
	signals  bool // the process has a signal.Notify loop
	noTimers bool // the runtime found no timer pending (all asleep)
}

// objectSlack is how far past a pointer a frame holds an object may lie
// and still be taken as inside it (a mutex or channel field of a struct
// the frame has a pointer to).
const objectSlack = 256

// buildWaitGraph classifies the goroutines of the latest snapshot, finds
// what each parked one waits on and who could wake it (from the program
// read as Go where the bundle holds it, else from the frames' words),
// runs the reachability fixpoint from the goroutines that can run, and
// finds wait-for cycles.
func buildWaitGraph(sd *snapDetail, st *stackTable, src *sourceCode, ps *programSource) *waitGraph {
	w := &waitGraph{byGoid: map[int64]*waitGor{}, mentions: map[uint64][]*waitGor{}, children: map[int64][]*waitGor{}, stacks: st,
		frames: map[int64][]Frame{}}
	if sd == nil || sd.truncated {
		return w
	}
	w.prog = newWakeProgram(ps)
	w.runtimeAsleep = sd.allAsleep
	signals := false
	for _, g := range sd.gs {
		if _, ok := w.frames[g.stack]; ok {
			continue
		}
		for _, f := range w.framesOf(g.stack) {
			signals = signals || f.Function == "os/signal.loop"
		}
	}
	xs := make([]waitGor, len(sd.gs)) // one block for all of them
	w.gs, w.byGoid = make([]*waitGor, 0, len(sd.gs)), make(map[int64]*waitGor, len(sd.gs))
	for i, g := range sd.gs {
		if src != nil {
			src.nameRefs(g)
		}
		x := &xs[i]
		x.gor = g
		frames := w.framesOf(g.stack)
		prog := waitProgram{
			wait: func(kind string) *gosrc.Wait { return w.prog.waitOf(w, g.stack, kind) },
			sema: func() bool { return w.prog.runtimeSema(w, g.stack) },
		}
		x.classified = classifyGor(g, frames, src, prog, waitScene{signals: signals, noTimers: sd.allAsleep != ""})
		if g.dumping != "" || x.class == classLive && isDumpingStack(frames) {
			x.class, x.undecided, x.timerBound = classInfra, false, 0
			why := g.dumping
			if why == "" {
				why = fmt.Sprintf("goroutine %d is the test runner's alarm (testing.(*M).startAlarm), printing the dump", g.goid)
			}
			w.dumping = append(w.dumping, why)
		}
		if x.class == classLive && !x.idle && !x.undecided {
			w.liveApp++
		}
		if x.class == classParked && (x.kind == "lock" || x.kind == "rlock") {
			loc, _ := locationFrame(frames)
			x.selfHeld = src.heldBySelf(loc)
		}
		if x.undecided {
			w.undecided++
		}
		if b := x.timerBound; b > 0 && (w.timerBound == 0 || b < w.timerBound) {
			w.timerBound = b
		}
		w.gs = append(w.gs, x)
		w.byGoid[g.goid] = x
		if g.creator != 0 {
			w.children[g.creator] = append(w.children[g.creator], x)
		}
	}
	known := w.indexMentions()
	for _, x := range w.gs {
		if x.class == classParked {
			x.objs, x.objAt = resolveObjects(x.block, known, x.kind == "lock" || x.kind == "rlock")
		}
	}
	w.condProgress()
	w.decide()
	w.reachAll()
	w.linkEdges()
	w.findHolders()
	w.possibleLockChan()
	w.findCycles()
	return w
}

// framesOf returns a stack's frames, leaf first, reading the stack
// table once per stack. The slice is shared: callers only read it.
func (w *waitGraph) framesOf(stack int64) []Frame {
	fr, ok := w.frames[stack]
	if !ok {
		fr = w.stacks.framesOf(stack)
		w.frames[stack] = fr
	}
	return fr
}

// classified is a goroutine's class as [classifyGor] decides it.
type classified struct {
	class gClass
	kind  string // wait kind when parked: "lock", "rlock", "chan send", "chan receive", "select", "waitgroup", "cond", "sema", "nil", "forever"
	// idle is set for a goroutine that can run but does nothing for a
	// long while: it waits for a signal (the run-until-signalled main) or
	// sleeps a minute or more. It can shut its workers down; it feeds no
	// one meanwhile.
	idle bool
	// undecided is set for a select or receive in the program's code
	// whose statement the kept source does not show (absent, changed, a
	// C of unknown type): a timer case cannot be ruled out, so it is
	// taken as able to run, as a timer wait is.
	undecided bool
	// endless is set for a goroutine that can run but never end: it
	// ranges over a Ticker's C with no way out of the loop
	// (waitStmt.endless).
	endless bool
	// timerBound is set, in minutes, for a select or receive whose
	// statement the source does not show but that has been blocked that
	// long: no timer case shorter than that is live, so it is taken as
	// parked, with the longer timer case it may still have as a caveat.
	timerBound int64
}

// classifyGor decides a goroutine's class and, when parked, its wait
// kind. A select or receive whose statement the source does not show
// may have a timer case ([timerWait]): it is undecided, taken as able to
// run, unless the runtime found no timer pending at all or marked the
// goroutine leaked (blocked on what nothing reachable can signal), or it has been
// blocked a minute or more (the runtime's wait time starts again each
// time it runs), which rules out every timer case shorter than that.
func classifyGor(g *gor, frames []Frame, src *sourceCode, prog waitProgram, sc waitScene) classified {
	if isInfraStack(frames) || isInfraState(g.state) {
		return classified{class: classInfra}
	}
	kind := waitKind(g.state, frames)
	switch kind {
	case "":
		return classified{class: classLive, idle: g.state == "sleep" && g.sleepNS >= longSleep}
	case "sema":
		if prog.sema() {
			return classified{class: classLive} // the runtime's own semaphore: it runs once the GC cycle ends
		}
	case "select", "chan receive":
		w := src.waitAt(frames, kind)
		if signalWait(w, frames, sc.signals) {
			return classified{class: classLive, idle: true}
		}
		t := timerWait(w, frames)
		if pw := prog.wait(kind); pw != nil && (w.kind == "" || t == triMaybe) {
			var signal bool
			if t, signal = progTimer(pw); signal {
				return classified{class: classLive, idle: true}
			}
		} else if pw != nil && t == triNo && len(deadlineCases(pw, true)) > 0 {
			t = triYes // the statement shows ctx.Done(); the program, a deadline on it
		}
		switch {
		case t == triNo || sc.noTimers || g.leaked:
		case t == triMaybe && g.wait > 0:
			return classified{class: classParked, kind: kind, timerBound: g.wait}
		default:
			return classified{class: classLive, undecided: t == triMaybe, endless: w.endless}
		}
	}
	return classified{class: classParked, kind: kind}
}

// waitProgram is what classifyGor asks of the program read as Go about
// one goroutine: its wait of a kind, and whether a semaphore it waits in
// is the runtime's own.
type waitProgram struct {
	wait func(kind string) *gosrc.Wait
	sema func() bool
}

// progTimer says, from the program, whether a timer can end a wait (a
// case on a timer's or ticker's channel, or on the Done channel of a
// context with a deadline: yes; a receive from a channel code not read
// made or was given: maybe, that code may be a timer's) and whether a
// signal can (a channel signal.Notify feeds).
func progTimer(pw *gosrc.Wait) (t tri, signal bool) {
	t = triNo
	for _, c := range pw.Cases {
		if c.Default {
			continue
		}
		timer, _, _ := c.Obj.DoneOf()
		switch {
		case c.Obj.Signal():
			signal = true
		case c.Obj.Timer() || timer:
			t = triYes
		case c.Op == gosrc.OpRecv && c.Obj.Opaque() && t == triNo:
			t = triMaybe
		}
	}
	return t, signal
}

// deadlineCases names the cases of a wait on the Done channel of a
// context that has a deadline, its own or one it derives from, whose
// cancel some statement calls (called) or none does. With the call, the
// runtime's timer closes it as its owner means it to; without, it waits
// out its deadline for want of the call: a finding of its own.
func deadlineCases(pw *gosrc.Wait, called bool) []string {
	var out []string
	for _, c := range pw.Cases {
		if timer, _, _ := c.Obj.DoneOf(); timer && !c.Default && c.Obj.CancelCalled() == called {
			out = append(out, strings.TrimSuffix(c.Expr, ".Done()"))
		}
	}
	return out
}

// longSleep: a goroutine sleeping this long at once is idle, not a
// loop that could feed anyone soon.
const longSleep = int64(60e9)

// isInfraState reports the runtime's own waits.
func isInfraState(state string) bool {
	for _, p := range []string{"GC ", "force gc", "finalizer wait", "cleanup wait", "trace reader", "GOMAXPROCS updater", "wait for GC cycle", "debug call", "preempted"} {
		if strings.HasPrefix(state, p) {
			return true
		}
	}
	return false
}

// indexMentions indexes every goroutine's pointer words and returns them
// sorted, as the objects frames can point into.
func (w *waitGraph) indexMentions() []uint64 {
	var known []uint64
	for _, x := range w.gs {
		for _, v := range x.words {
			l := w.mentions[v]
			if len(l) == 0 || l[len(l)-1] != x {
				w.mentions[v] = append(l, x)
			}
			if len(l) == 0 {
				known = append(known, v)
			}
		}
	}
	sort.Slice(known, func(i, j int) bool { return known[i] < known[j] })
	return known
}

// resolveObjects turns a goroutine's wait object and the words of its
// blocking call (what it reached the object through: a Cond or channel
// hangs off a struct the frames point to) into the objects other frames
// point to: the nearest pointer at or below each address (within
// objectSlack; exact in the binary's image), and for a lock also the
// struct just below its exact address. The wait object, when known,
// comes first. Each object comes with where it was read.
func resolveObjects(b blockInfo, known []uint64, lock bool) ([]uint64, []argRef) {
	var out []uint64
	var at []argRef
	add := func(a uint64, ref argRef) {
		i := sort.Search(len(known), func(i int) bool { return known[i] > a }) - 1
		if i >= 0 && (known[i] == a || a >= staticLimit && a-known[i] < objectSlack) {
			a = known[i]
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
			at = append(at, ref)
		}
	}
	if b.obj != 0 {
		add(b.obj, b.objAt)
		// A lock is a field: the waiter's own frame prints the mutex's
		// exact address, so the struct that holds it is known only from
		// other frames' pointers just below it (the holder's receiver).
		if i := sort.Search(len(known), func(i int) bool { return known[i] >= b.obj }) - 1; lock && i >= 0 && b.obj >= staticLimit && b.obj-known[i] < objectSlack {
			add(known[i], b.objAt)
		}
	}
	for i, v := range b.via {
		add(v, b.viaAt[i])
	}
	return out, at
}

// owner returns x's creator when the function that ran the go statement
// is still running in it (still on its stack): that function can still
// hand the new goroutine what it holds. A creator that returned from it
// owns nothing of x's any more, unless x is a library's own goroutine
// (libraryGoroutine): its creator may still hold the object x serves.
func (w *waitGraph) owner(x *waitGor) *waitGor {
	c := w.byGoid[x.creator]
	if c == nil || c == x || c.class == classInfra || x.site == nil || x.site.creator == "" {
		return c
	}
	if libraryGoroutine(x.site) {
		return c
	}
	for _, f := range w.framesOf(c.stack) {
		if f.Function == x.site.creator {
			return c
		}
	}
	return nil
}

// libraryGoroutine reports a library's own goroutine: no frame of the
// user's, started inside the library (database/sql.OpenDB starting
// connectionOpener). It lives for an object the library returned to its
// caller, and the goroutine that made the call may hold that object in a
// local, which no frame prints, long after the constructor returned.
func libraryGoroutine(s *site) bool {
	if _, i := userFrame(s.frames); i >= 0 {
		return false
	}
	return !isUser(Frame{Function: s.creator})
}

// findCycles numbers the strongly connected components of two or more
// parked goroutines along waker edges that nothing able to run holds a
// pointer into (a live creator cannot release its children's locks), at
// least one of them waiting for a lock: each waits for something only
// the others could release.
func (w *waitGraph) findCycles() {
	var stack, comp []*waitGor
	next := 1
	var visit func(x *waitGor)
	visit = func(x *waitGor) {
		t := &x.tarjan
		t.index, t.low = next, next
		next++
		stack = append(stack, x)
		t.on = true
		for _, y := range x.wakers {
			if y.class != classParked || y.reach == reachMention {
				continue
			}
			if y.tarjan.index == 0 {
				visit(y)
				t.low = min(t.low, y.tarjan.low)
			} else if y.tarjan.on {
				t.low = min(t.low, y.tarjan.index)
			}
		}
		if t.low != t.index {
			return
		}
		comp = comp[:0]
		for {
			y := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			y.tarjan.on = false
			comp = append(comp, y)
			if y == x {
				break
			}
		}
		// Goroutines that hold each other's channels may all wait for a
		// third (idle partners of a stuck producer); only a lock
		// waited on in the cycle makes it one: a lock is released by
		// its holder alone.
		if len(comp) >= 2 && slices.ContainsFunc(comp, func(y *waitGor) bool { return y.kind == "lock" || y.kind == "rlock" }) {
			w.cycles++
			for _, y := range comp {
				y.scc = w.cycles
			}
		}
	}
	for _, x := range w.gs {
		if x.class == classParked && x.reach != reachMention && x.tarjan.index == 0 {
			visit(x)
		}
	}
}

func containsObj(s []uint64, v uint64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func containsGor(s []*waitGor, g *waitGor) bool {
	for _, x := range s {
		if x == g {
			return true
		}
	}
	return false
}
