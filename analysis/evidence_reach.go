package analysis

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/leakscope/leakscope/analysis/internal/gosrc"
)

// The wait-for fixpoint, as a worklist: a goroutine that can run (or one
// it wakes) is active; an active goroutine wakes
//   - the parked goroutines whose wait the program shows (progWait), when
//     its future holds an operation that ends that wait, on the same
//     instance (decided from the program read as Go);
//   - the parked goroutines whose wait the program does not show, when
//     its frames hold a pointer to what they wait on and it does not wait
//     on it the same way (the runtime's own words).
// Each waiter is woken once, and the waiters of one operation are kept
// by the instance they wait on, so the fixpoint costs what the
// goroutines' futures and words hold, not their pairs.

// wakeIndex holds the parked goroutines not reached yet, by how they can
// be woken.
type wakeIndex struct {
	// byKey holds decided waiters by operation: under each of their
	// homes (the goroutines that may have made the instance they wait
	// on; 0 when the class escapes), and, for a class that does not
	// escape whose instance the dump does not place, by the root their
	// frames hold it through.
	byKey map[gosrc.Key]*keyWaiters
	// byObj holds undecided waiters by object and co-waiting group.
	byObj map[uint64]map[coGroup][]*waitGor
}

// keyWaiters are the waiters of one operation not reached yet: by home
// (a waiter is under each of its homes);
// those whose home the dump does not give (a creator chain cut by a
// goroutine gone, or longer than maxChain), on a class that does not
// escape, also by the root their frames hold the instance through (a
// pointer parameter to a named struct that leads to it: see rootsOf),
// or rootless.
type keyWaiters struct {
	homes    map[int64][]*waitGor
	roots    map[string]map[uint64][]*waitGor
	rootless []*waitGor
	// addressed holds the waiters whose frames print the address of the
	// object they wait on, filed the same way, and byAddr the same by
	// that address: a release whose object the waker's frames place
	// reaches only those on that object.
	addressed *keyWaiters
	byAddr    map[uint64][]*waitGor
}

// newKeyWaiters is an empty index.
func newKeyWaiters() *keyWaiters {
	return &keyWaiters{homes: map[int64][]*waitGor{}, roots: map[string]map[uint64][]*waitGor{}}
}

// coGroup is a set of goroutines waiting on one object the same way:
// of one wait kind, and, when their frames print the object waited on
// (block), the same one.
type coGroup struct {
	kind  string
	block bool   // the frames print the object waited on …
	obj   uint64 // … resolved to this one
	has   bool   // the object pointed to is one they wait on
}

// groupOn is x's co-waiting group seen from object o, which it points to.
func groupOn(x *waitGor, o uint64) coGroup {
	g := coGroup{kind: x.kind, has: containsObj(x.objs, o)}
	if x.block.obj != 0 && len(x.objs) > 0 {
		g.block, g.obj = true, x.objs[0]
	}
	return g
}

// coWaiting reports whether a waiter in group w and a goroutine in group
// y, both on one object, wait on it the same way (y cannot release w):
// the same kind, and, when both print the object they wait on, the same
// one, else y waits on the object.
func coWaiting(w, y coGroup) bool {
	if w.kind != y.kind {
		return false
	}
	if w.block && y.block {
		return w.obj == y.obj
	}
	return y.has
}

// newWakeIndex indexes the parked goroutines.
func (w *waitGraph) newWakeIndex() *wakeIndex {
	ix := &wakeIndex{byKey: map[gosrc.Key]*keyWaiters{}, byObj: map[uint64]map[coGroup][]*waitGor{}}
	for _, x := range w.gs {
		if x.class != classParked || x.selfHeld != "" {
			continue
		}
		if x.prog != nil {
			w.indexKeys(ix, x)
			continue
		}
		for _, o := range x.objs {
			m := ix.byObj[o]
			if m == nil {
				m = map[coGroup][]*waitGor{}
				ix.byObj[o] = m
			}
			g := groupOn(x, o)
			m[g] = append(m[g], x)
		}
	}
	return ix
}

// indexKeys files a decided waiter under each operation that can end
// its wait.
func (w *waitGraph) indexKeys(ix *wakeIndex, x *waitGor) {
	for i, k := range x.prog.keys {
		kw := ix.byKey[k]
		if kw == nil {
			kw = newKeyWaiters()
			ix.byKey[k] = kw
		}
		if a := x.prog.addr; a != 0 {
			if kw.addressed == nil {
				kw.addressed, kw.byAddr = newKeyWaiters(), map[uint64][]*waitGor{}
			}
			kw.byAddr[a] = append(kw.byAddr[a], x)
			kw = kw.addressed
		}
		c := w.prog.p.KeyClass(k)
		if c.Escapes() {
			kw.homes[0] = append(kw.homes[0], x)
			continue
		}
		if hs := x.prog.homes[i]; len(hs) > 0 {
			for _, h := range hs {
				if h == x.goid && len(w.children[h]) == 0 {
					continue // only a descendant's homes hold its own goid
				}
				kw.homes[h] = append(kw.homes[h], x)
			}
			continue
		}
		roots := w.rootsOf(x, c)
		if len(roots) == 0 {
			kw.rootless = append(kw.rootless, x)
			continue
		}
		r := roots[0]
		if kw.roots[r.typ] == nil {
			kw.roots[r.typ] = map[uint64][]*waitGor{}
		}
		kw.roots[r.typ][r.v] = append(kw.roots[r.typ][r.v], x)
	}
}

// reachAll runs the fixpoint from the goroutines that can run, then
// gives the undecided waiters their family reach.
func (w *waitGraph) reachAll() {
	ix := w.newWakeIndex()
	var queue []*waitGor
	for _, x := range w.gs {
		if x.class == classLive || w.infraCanRun(x) {
			queue = append(queue, x)
		}
	}
	for len(queue) > 0 {
		for len(queue) > 0 {
			y := queue[0]
			queue = queue[1:]
			queue = w.wakeByProgram(ix, y, queue)
			queue = w.wakeByWords(ix, y, queue)
		}
		queue = w.resolveBounds(ix, queue)
	}
	w.markBounds()
	w.familyReach()
}

// infraCanRun reports machinery (signal delivery, a server's plumbing,
// the test runner) that can run and whose future the program shows: it
// releases what the program's functions it calls release (a signal
// handler's cancel, a server's handler). Its wait, if any, must be one
// the program shows a timer or a signal ends.
func (w *waitGraph) infraCanRun(x *waitGor) bool {
	if x.class != classInfra || w.isDumping(x) || w.prog == nil {
		return false
	}
	kind := waitKind(x.state, w.framesOf(x.stack))
	if kind == "" {
		return !isInfraState(x.state)
	}
	pw := w.prog.waitOf(w, x.stack, kind)
	if pw == nil {
		return false
	}
	t, signal := progTimer(pw)
	return signal || t != triNo
}

// isDumping reports the goroutine taking the dump: it releases nothing.
func (w *waitGraph) isDumping(y *waitGor) bool { return y.class == classInfra && y.dumping != "" }

// wake marks x reached by y and queues it.
func wake(x, y *waitGor, how string, queue []*waitGor) []*waitGor {
	if x.reach == reachMention || x == y {
		return queue
	}
	x.reach = reachMention
	x.wokeBy, x.wokeHow = y, how
	return append(queue, x)
}

// wakeByProgram wakes the decided waiters y's future can release: on a
// class that escapes, all of them; on one that does not, those whose
// instance y holds — made by y or by a creator that handed it down to
// y (any, when y's own chain is cut or too long) — and those whose
// instance the dump does not place, unless both hold the instance
// through a root of one named type and the roots differ (see rootsOf).
func (w *waitGraph) wakeByProgram(ix *wakeIndex, y *waitGor, queue []*waitGor) []*waitGor {
	if w.prog == nil || len(ix.byKey) == 0 {
		return queue
	}
	fut := w.futureOf(y)
	for _, cp := range fut.Caps {
		if ix.byKey[cp.Key] == nil || w.deferBounded(y, cp) {
			continue
		}
		queue = w.wakeCap(ix, y, cp, queue)
	}
	return queue
}

// wakeCap wakes the decided waiters release cp of y can reach.
func (w *waitGraph) wakeCap(ix *wakeIndex, y *waitGor, cp gosrc.Cap, queue []*waitGor) []*waitGor {
	kw := ix.byKey[cp.Key]
	how := w.wakeText(y, cp)
	queue = w.wakeIn(kw, y, cp, how, queue)
	if kw.addressed == nil {
		return queue
	}
	addrs, placed := w.capAddrs(y, cp)
	if !placed {
		if n := boundedTo(w.prog.p.KeyClass(cp.Key), cp); n > 0 {
			if q, ok := w.wakeInstances(kw, y, cp, n, how, queue); ok {
				return w.wakeUnplaced(kw.addressed, y, w.prog.p.KeyClass(cp.Key), how, q)
			}
		}
		return w.wakeIn(kw.addressed, y, cp, how, queue)
	}
	for _, a := range addrs {
		for _, x := range kw.byAddr[a] {
			queue = wake(x, y, fmt.Sprintf("%s, on the same object (%#x)", how, a), queue)
		}
		delete(kw.byAddr, a)
	}
	return queue
}

// wakeIn wakes the waiters of one index that a release cp of y can
// reach: by home, then those the dump does not place.
func (w *waitGraph) wakeIn(kw *keyWaiters, y *waitGor, cp gosrc.Cap, how string, queue []*waitGor) []*waitGor {
	c := w.prog.p.KeyClass(cp.Key)
	if cp.Fresh > 0 && !c.Escapes() {
		return w.wakeCurrent(kw, y, cp, how, queue)
	}
	homes, any := w.homesOf(y, c)
	if c.Escapes() || any {
		homes = sortedHomes(kw.homes)
	}
	for _, h := range homes {
		for _, x := range kw.homes[h] {
			queue = wake(x, y, how, queue)
		}
		delete(kw.homes, h)
	}
	return w.wakeUnplaced(kw, y, c, how, queue)
}

// wakeUnplaced wakes the waiters whose instance the dump does not place:
// the rootless, those whose root type y holds no root of, and those
// whose root y holds.
func (w *waitGraph) wakeUnplaced(kw *keyWaiters, y *waitGor, c gosrc.Class, how string, queue []*waitGor) []*waitGor {
	for _, x := range kw.rootless {
		queue = wake(x, y, how, queue)
	}
	kw.rootless = nil
	if len(kw.roots) == 0 {
		return queue
	}
	mine := map[string][]uint64{}
	for _, r := range w.rootsOf(y, c) {
		mine[r.typ] = append(mine[r.typ], r.v)
	}
	for _, t := range slices.Sorted(maps.Keys(kw.roots)) {
		byWord := kw.roots[t]
		vs, ok := mine[t]
		if !ok {
			for _, v := range sortedWords(byWord) {
				for _, x := range byWord[v] {
					queue = wake(x, y, how, queue)
				}
			}
			delete(kw.roots, t)
			continue
		}
		for _, v := range vs {
			for _, x := range byWord[v] {
				queue = wake(x, y, how+fmt.Sprintf(", and it holds the same %s (%#x)", t, v), queue)
			}
			delete(byWord, v)
		}
	}
	return queue
}

// sortedWords lists a map's words in order.
func sortedWords(m map[uint64][]*waitGor) []uint64 {
	out := make([]uint64, 0, len(m))
	for v := range m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// sortedHomes lists a bucket map's homes in order.
func sortedHomes(m map[int64][]*waitGor) []int64 {
	out := make([]int64, 0, len(m))
	for h := range m {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// wakeByWords wakes the undecided waiters on an object y's frames point
// to, except those waiting on it the way y does.
func (w *waitGraph) wakeByWords(ix *wakeIndex, y *waitGor, queue []*waitGor) []*waitGor {
	if y.class == classInfra {
		return queue
	}
	for _, o := range y.words {
		m := ix.byObj[o]
		if len(m) == 0 {
			continue
		}
		waits := y.class == classParked && y.prog == nil
		for _, g := range sortedCoGroups(m) {
			if waits && coWaiting(g, groupOn(y, o)) {
				continue
			}
			for _, x := range m[g] {
				queue = wake(x, y, "", queue)
			}
			delete(m, g)
		}
	}
	return queue
}

// sortedCoGroups lists co-waiting groups in a fixed order.
func sortedCoGroups(m map[coGroup][]*waitGor) []coGroup {
	out := make([]coGroup, 0, len(m))
	for g := range m {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.obj != b.obj {
			return a.obj < b.obj
		}
		if a.block != b.block {
			return b.block
		}
		if a.has != b.has {
			return b.has
		}
		return a.kind < b.kind
	})
	return out
}

// familyReach gives each undecided parked goroutine nothing woke the
// weak reach of its family: a child that can run (it may hand back a
// result or Done), else an owner that can run (it may feed it).
func (w *waitGraph) familyReach() {
	for _, x := range w.gs {
		if x.class != classParked || x.prog != nil || x.reach != reachNone || x.selfHeld != "" {
			continue
		}
		for _, y := range w.children[x.goid] {
			if y != x && y.class != classInfra && (y.class == classLive && !y.idle || y.reach == reachMention) {
				x.reach, x.viaChild = reachFamily, true
				break
			}
		}
		if x.reach != reachNone {
			continue
		}
		feeds := x.kind == "chan receive" || x.kind == "select"
		if c := w.owner(x); c != nil && (c.class == classLive && (!c.idle || feeds) || c.reach == reachMention) {
			x.reach = reachFamily
		}
	}
}

// wakeCurrent wakes, for a release that acts only on the object a frame
// of y made in its current call (a local made anew once per call: see
// [gosrc.Cap]), the waiters that may hold that object: y's descendants.
// Of the children y started at one go statement of that function, outside
// its loops, only the one its current call started holds it (each call
// started one and made one object); the waiters descending from the
// others hold objects of earlier calls, and stay. Which child is the
// current call's the dump does not say: the latest started (the highest
// goid) stands for it, so the count of those that stay is exact. Those
// whose instance the dump does not place are woken as by any release.
func (w *waitGraph) wakeCurrent(kw *keyWaiters, y *waitGor, cp gosrc.Cap, how string, queue []*waitGor) []*waitGor {
	frames := w.framesOf(y.stack)
	if cp.Fresh > len(frames) {
		return queue
	}
	fn := frames[cp.Fresh-1].Function
	bucket := kw.homes[y.goid]
	current := map[int]*waitGor{} // by go statement line: the child standing for the current call's
	via := make([]*waitGor, len(bucket))
	for i, x := range bucket {
		ch, line := w.callChild(x, y, fn)
		if ch == nil {
			continue
		}
		via[i] = ch
		if cur := current[line]; cur == nil || ch.goid > cur.goid {
			current[line] = ch
		}
	}
	chosen := map[*waitGor]bool{}
	for _, ch := range current {
		chosen[ch] = true
	}
	var stay []*waitGor
	for i, x := range bucket {
		if ch := via[i]; ch != nil && !chosen[ch] {
			stay = append(stay, x)
			continue
		}
		queue = wake(x, y, how, queue)
	}
	if len(stay) > 0 {
		kw.homes[y.goid] = stay
	} else {
		delete(kw.homes, y.goid)
	}
	return w.wakeUnplaced(kw, y, w.prog.p.KeyClass(cp.Key), how, queue)
}

// callChild is the child of y that waiter x descends from (x itself, or
// an ancestor), when y started it at a go statement of function fn that
// runs once per call, with that statement's line; nil otherwise.
func (w *waitGraph) callChild(x, y *waitGor, fn string) (*waitGor, int) {
	g := x
	for range maxChain {
		if g.creator == y.goid {
			break
		}
		g = w.byGoid[g.creator]
		if g == nil || g == y {
			return nil, 0
		}
	}
	if g.creator != y.goid || g.site == nil || g.site.creatorStackID == 0 {
		return nil, 0
	}
	fr := w.framesOf(g.site.creatorStackID)
	if len(fr) == 0 || fr[0].Function != fn || !w.onceAt(g.site.creatorStackID, fr[0]) {
		return nil, 0
	}
	return g, fr[0].Line
}

// onceAt is [gosrc.Program.OnceAt] of a creator stack's go statement
// frame, read once per stack.
func (w *waitGraph) onceAt(stack int64, f Frame) bool {
	if v, ok := w.prog.once[stack]; ok {
		return v
	}
	v := w.prog.p.OnceAt(w.prog.ps.frames([]Frame{f})[0])
	w.prog.once[stack] = v
	return v
}
