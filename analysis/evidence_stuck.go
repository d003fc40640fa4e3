package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/leakscope/leakscope/internal/gosym"
)

// stuckFacts is what the latest snapshot's wait-for graph and the
// snapshots before it say about the members of one site.
type stuckFacts struct {
	members      int // in the latest snapshot, with per-goroutine detail
	parked, live int
	unreached    int // parked, and nothing that can run can wake them
	byMention    int // reachable through a pointer held by a goroutine that can run
	// byProgram counts those reached because the program read as Go
	// shows a goroutine that can run performing what ends their wait;
	// wokeHow is the first one's basis.
	byProgram int
	wokeHow   string
	// decided counts the unreached members whose wait the program shows:
	// every statement that could end it is known (releasers names a
	// few; none at all when there is no such statement), and none can
	// still run. globals names the package-level variables they wait on.
	decided   int
	releasers []string
	globals   []string
	// deadlines names the contexts whose deadline can still end their
	// wait though no statement calls their cancel function.
	deadlines []string
	// bound is set when goroutines that can run release their class but
	// reach too few of its objects to wake them all (evidence_bound.go).
	bound           *waitBound
	byFamily        int // consumers reachable only through their creator or children
	familyProducer  int // unreached, but their creator or a child can run
	infraWaiting    int // machinery (the test runner) waiting for a goroutine it created that is stuck
	noWaker         int // unreached, and no goroutine holds what they wait on
	noWakerExact    int // … of them, the object itself is known (not only what it was reached through)
	inCycle         int // in a wait-for cycle
	kind            string
	holdsForOthers  int             // goroutines of other sites waiting on what members hold
	cycleSites      map[*site]bool  // other sites in the same cycles
	cycleKinds      map[string]bool // wait kinds of every goroutine in those cycles
	causes          map[*site]int   // unreached members all of whose wakers are stuck at that site
	consequenceRels map[string]bool // how consequences wait on this site
	infraWaiters    []consequence   // runtime/test-runner goroutines waiting on members
	creatorAlive    bool
	depth           int      // program calls between the entry function and the wait (waitDepth)
	noLoop          bool     // the program shows a member's wait is in no loop of its function
	mainGoroutine   bool     // the site is the main goroutine (entry main.main), which waits for the program\'s end
	liveElsewhere   bool     // some goroutine of the program can run
	dumping         []string // the goroutines taking the dump, not counted as able to run, and why
	undecided       int      // goroutines of the program a timer may wake, for all the source shows
	runtimeAsleep   string   // the traceback the runtime printed on finding all goroutines asleep
	heldWaiters     int      // lock waiters stuck only behind this site, which holds their lock while it blocks
	endless         int      // members that can run but never end (waitGor.endless) and whose creator has returned
	selfHeld        int      // members whose source shows they hold the lock they wait for
	selfHeldNote    string   // what the first one's source shows
	asleepBound     int64    // waitGraph.timerBound: all asleep only unless a timer case this long or longer remains
	// timerBound counts members parked for want of source after a long
	// wait (waitGor.timerBound), timerBoundMin the shortest such wait.
	timerBound, timerBoundMin int64
	objects                   []uint64
	objectAt                  []argRef // where each of objects was read
	// Persistence across snapshots (from site.persist).
	snapshots  int
	persisted  float64 // share of members parked identically in the snapshot before
	spanSec    float64 // how long persisted members had been parked identically
	progressed bool    // the rest of the process changed between the two latest snapshots
	// possible counts unreached members that a goroutine able to run
	// may hold what they wait on for (findHolders), with the first
	// member's notes; ruledOut the first member's holders ruled out.
	possible                int
	possibleNotes, ruledOut []holderNote
	possibleCycle           bool // a cycle edge comes from possible holders, not from the frames
	// Progress the runtime's own counters show (addProgress).
	woken, signalled           int
	wokenBasis, signalledBasis string
}

// consequence is a goroutine group waiting for a stuck one.
type consequence struct {
	site     *site
	state    string
	location Frame
	count    int
	goids    []int64
	relation string
}

// stuckFactsOf sums the wait-for graph up by site.
func stuckFactsOf(in *loaded, w *waitGraph) map[*site]*stuckFacts {
	out := map[*site]*stuckFacts{}
	get := func(s *site) *stuckFacts {
		f := out[s]
		if f == nil {
			f = newStuckFacts(in, w, s)
			out[s] = f
		}
		return f
	}
	sccKinds := cycleWaitKinds(w)
	kinds := map[*site]map[string]int{}
	for _, x := range w.gs {
		if x.site == nil {
			continue
		}
		f := get(x.site)
		f.members++
		switch x.class {
		case classLive:
			f.live++
			if x.endless && w.owner(x) == nil {
				f.endless++
			}
			continue
		case classInfra:
			continue
		}
		if kinds[x.site] == nil {
			kinds[x.site] = map[string]int{}
		}
		kinds[x.site][x.kind]++
		if f.addParked(w, x) {
			f.addUnreached(w, x, sccKinds[x.scc])
			for _, y := range x.wakers {
				if y.site != nil && y.site != x.site && out[y.site] != nil {
					out[y.site].holdsForOthers++
				}
			}
		}
	}
	for s, m := range kinds {
		out[s].kind = topKey(toInt64(m))
	}
	markHeldWhileBlocked(out)
	w.infraConsequences(out)
	return out
}

// newStuckFacts starts a site's facts with what the whole snapshot says.
func newStuckFacts(in *loaded, w *waitGraph, s *site) *stuckFacts {
	f := &stuckFacts{cycleSites: map[*site]bool{}, cycleKinds: map[string]bool{}, causes: map[*site]int{}, consequenceRels: map[string]bool{}}
	f.liveElsewhere = w.liveApp > 0
	f.dumping = w.dumping
	f.undecided = w.undecided
	f.runtimeAsleep = w.runtimeAsleep
	f.asleepBound = w.timerBound
	if sd := in.detail; sd != nil {
		f.snapshots = len(in.d.snapshots)
		f.progressed = sd.progressed()
	}
	f.depth = waitDepth(s.frames)
	f.mainGoroutine = s.entry == "main.main"
	if p := s.persist; p.members > 0 {
		f.persisted = float64(p.persisted) / float64(p.members)
		f.spanSec = p.meanSpan()
	}
	return f
}

// cycleWaitKinds lists, per wait-for cycle, the wait kinds in it, and
// twoLocks when its lock waiters wait on two locks or more (their
// frames print the locks, or the program tells them apart).
func cycleWaitKinds(w *waitGraph) map[int]map[string]bool {
	out := map[int]map[string]bool{}
	locks := map[int]map[uint64]bool{}
	for _, x := range w.gs {
		if x.scc == 0 {
			continue
		}
		if out[x.scc] == nil {
			out[x.scc], locks[x.scc] = map[string]bool{}, map[uint64]bool{}
		}
		out[x.scc][x.kind] = true
		if id, ok := lockIdentity(x, w.framesOf(x.stack)); ok && (x.kind == "lock" || x.kind == "rlock") {
			locks[x.scc][id] = true
			if len(locks[x.scc]) > 1 {
				out[x.scc][twoLocks] = true
			}
		}
	}
	return out
}

// twoLocks marks a cycle whose waiters wait on two locks or more.
const twoLocks = "two locks"

// lockIdentity is the lock a waiter waits on: the object its frames
// print (a semaphore taken back to its lock), else the program's class
// of it (negated, apart from addresses).
func lockIdentity(x *waitGor, frames []Frame) (uint64, bool) {
	switch {
	case x.block.obj != 0 && len(x.objs) > 0:
		return x.objs[0] - semaOffset(x, frames), true
	case x.prog != nil && len(x.prog.w.Cases) > 0:
		return uint64(1<<63) | uint64(uint32(x.prog.w.Cases[0].Obj.ID())), true
	}
	return 0, false
}

// semaOffset is where, within its lock, the semaphore a traceback's
// runtime.semacquire1 prints lies, by the sync function that called it:
// a sync.RWMutex is {w Mutex; writerSem, readerSem uint32; …} and a
// Mutex {state int32; sema uint32}, so a reader waits at +12, a writer
// for the readers at +8 and a writer for w at +4 (w is at +0), whose
// lock is then the RWMutex itself. 0 for any other frame.
func semaOffset(x *waitGor, frames []Frame) uint64 {
	if x.block.objAt.fn != "runtime.semacquire1" || x.block.obj != x.objs[0] {
		return 0
	}
	for _, f := range frames {
		switch f.Function {
		case "sync.runtime_SemacquireRWMutexR":
			return 12
		case "sync.runtime_SemacquireRWMutex":
			return 8
		case "sync.runtime_SemacquireMutex", "internal/sync.runtime_SemacquireMutex":
			return 4
		}
	}
	return 0
}

// reachedBy reports a parked goroutine that something able to run can
// wake: a goroutine holding what it waits on, or a creator or child
// feeding it. The others are unreached.
func reachedBy(x *waitGor) bool {
	return x.reach == reachMention || x.reach == reachFamily && fedByFamily(x)
}

// addParked counts a parked member: its progress, timer bound, creator,
// objects and how it is reached. It reports whether nothing that can
// run reaches it (an unreached member, for addUnreached).
func (f *stuckFacts) addParked(w *waitGraph, x *waitGor) bool {
	f.parked++
	f.addProgress(x)
	if x.prog != nil && !x.prog.w.Loop {
		f.noLoop = true
	}
	if x.timerBound > 0 {
		if f.timerBound == 0 || x.timerBound < f.timerBoundMin {
			f.timerBoundMin = x.timerBound
		}
		f.timerBound++
	}
	if c := w.owner(x); c != nil && c.class != classInfra {
		f.creatorAlive = true
	}
	for i, o := range x.objs {
		if len(f.objects) < 4 && !slices.Contains(f.objects, o) {
			f.objects = append(f.objects, o)
			f.objectAt = append(f.objectAt, x.objAt[i])
		}
	}
	switch x.reach {
	case reachMention:
		f.byMention++
		if x.wokeHow != "" {
			f.byProgram++
			if f.wokeHow == "" {
				f.wokeHow = x.wokeHow
			}
		}
	case reachFamily:
		if fedByFamily(x) {
			f.byFamily++
		} else {
			// A creator that can run rarely releases its child's lock,
			// takes its send, ends its WaitGroup or signals a Cond it
			// holds no pointer to: weak evidence, and the goroutine
			// stays unreached.
			f.familyProducer++
		}
	}
	return !reachedBy(x)
}

// markHeldWhileBlocked counts, for each site blocked on something other
// than a lock, the lock waiters stuck only behind it: it holds their
// lock while it blocks (a lock held across a channel operation or a
// callback, with no cycle: nobody it waits for wants the lock).
func markHeldWhileBlocked(out map[*site]*stuckFacts) {
	for _, f := range out {
		if f.kind != "lock" && f.kind != "rlock" {
			continue
		}
		for cause, n := range f.causes {
			if c := out[cause]; c != nil && c.kind != "lock" && c.kind != "rlock" && c.inCycle == 0 {
				c.heldWaiters += n
			}
		}
	}
}

// addUnreached counts an unreached member: its possible holders (or the
// lack of any waker), its cycle and the sites it waits for.
func (f *stuckFacts) addUnreached(w *waitGraph, x *waitGor, cycleKinds map[string]bool) {
	f.unreached++
	if x.prog != nil {
		if f.decided == 0 {
			f.releasers = w.releaseStatements(x)
			f.globals = w.waitGlobals(x)
			f.deadlines = deadlineCases(x.prog.w, false)
		}
		f.decided++
		if f.bound == nil {
			f.bound = x.bound
		}
	}
	if x.selfHeld != "" {
		f.selfHeld++
		if f.selfHeldNote == "" {
			f.selfHeldNote = x.selfHeld
		}
	}
	if len(f.ruledOut) == 0 {
		f.ruledOut = x.ruledOut
	}
	if len(x.possible) > 0 {
		f.possible++
		if len(f.possibleNotes) == 0 {
			f.possibleNotes = x.possible
		}
	} else if len(x.wakers) == 0 && x.bound == nil && (x.kind != "waitgroup" || len(w.children[x.goid]) == 0) {
		f.noWaker++
		if x.block.obj != 0 {
			f.noWakerExact++
		}
	}
	if x.scc != 0 {
		f.inCycle++
		f.possibleCycle = f.possibleCycle || x.possibleCycle
		for k := range cycleKinds {
			f.cycleKinds[k] = true
		}
		for _, y := range x.wakers {
			if y.scc == x.scc && y.site != nil && y.site != x.site {
				f.cycleSites[y.site] = true
			}
		}
	}
	for _, cause := range causeSites(w, x) {
		f.causes[cause]++
	}
}

// causeSites returns the sites x waits on when every goroutine that could
// release what x waits on (its wakers, and its children when it waits on
// a WaitGroup or a result) is stuck at other sites and none of them is in
// a cycle with x; nil otherwise.
func causeSites(w *waitGraph, x *waitGor) []*site {
	cands := append([]*waitGor(nil), x.wakers...)
	if x.kind == "waitgroup" || x.kind == "chan receive" || x.kind == "select" {
		for _, y := range w.children[x.goid] {
			if y.class != classInfra && !containsGor(cands, y) {
				cands = append(cands, y)
			}
		}
	}
	var out []*site
	for _, y := range cands {
		if y.class != classParked || y.reach == reachMention || y.site == nil || y.site == x.site || (x.scc != 0 && y.scc == x.scc) {
			return nil
		}
		if !containsSite(out, y.site) {
			out = append(out, y.site)
		}
	}
	return out
}

func containsSite(s []*site, x *site) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// infraConsequences records runtime-machinery goroutines (the test
// runner in testing.(*T).Run, above all) that wait on a goroutine they
// created which is stuck: they are consequences of its site.
func (w *waitGraph) infraConsequences(out map[*site]*stuckFacts) {
	bySite := map[*site]map[string]*consequence{}
	for _, x := range w.gs {
		if x.class != classInfra || x.state == "running" || waitKind(x.state, nil) == "" {
			continue
		}
		var cause *site
		for _, y := range w.children[x.goid] {
			if y.class == classParked && y.reach == reachNone && y.site != nil {
				cause = y.site
				break
			}
		}
		if cause == nil || out[cause] == nil || x.site == nil {
			continue
		}
		m := bySite[cause]
		if m == nil {
			m = map[string]*consequence{}
			bySite[cause] = m
		}
		k := x.site.loc.Function + "\x00" + x.state
		c := m[k]
		if c == nil {
			rel := "waits for it to finish"
			if strings.HasPrefix(machineryFrame(x.site).Function, "testing.") {
				rel = "the test runner waits for the test goroutine"
			}
			c = &consequence{site: x.site, state: x.state, location: machineryFrame(x.site), relation: rel}
			m[k] = c
		}
		c.count++
		if len(c.goids) < 8 {
			c.goids = append(c.goids, x.goid)
		}
		if f := out[x.site]; f != nil {
			f.causes[cause]++
			f.infraWaiting++
		}
	}
	for s, m := range bySite {
		for _, c := range m {
			out[s].infraWaiters = append(out[s].infraWaiters, *c)
		}
		slices.SortFunc(out[s].infraWaiters, func(a, b consequence) int {
			return cmp.Or(cmp.Compare(a.location.Function, b.location.Function), cmp.Compare(a.location.Line, b.location.Line), cmp.Compare(a.state, b.state))
		})
	}
}

// findings names what the wait-for reasoning found about a site, for the
// rules' wait_for conditions.
func (f *stuckFacts) findings() []string {
	if f == nil || f.unreached == 0 {
		return nil
	}
	var out []string
	if f.selfHeld > 0 {
		out = append(out, "held-by-self")
	}
	if f.inCycle > 0 {
		out = append(out, cycleKind(f.cycleKinds), "cycle")
	}
	if (f.kind == "lock" || f.kind == "rlock") && f.noWaker > 0 {
		out = append(out, "no-holder")
	}
	if f.heldWaiters > 0 && f.inCycle == 0 {
		out = append(out, "held-while-blocked")
	}
	out = append(out, "unreachable")
	if !f.liveElsewhere && f.undecided == 0 {
		out = append(out, "all-asleep")
	}
	return out
}

// cycleKind names a wait-for cycle by the waits in it, each kind with
// its own rule (pattern, wording and fix):
//   - "lock-cycle": locks only, taken in different orders;
//   - "rlock-writer": read locks and a writer only, on one lock (a read
//     lock taken again while a writer waits); on two locks or more it
//     is a lock-order cycle;
//   - "lock-chan-cycle": a lock and a channel operation (the holder
//     blocked on a send or receive whose partner waits for the lock);
//   - "lock-wait-cycle": a lock (read or write) and a Cond, WaitGroup or
//     semaphore wait (a lock held across Cond.Wait or Wait).
func cycleKind(kinds map[string]bool) string {
	var chans, waits bool
	for k := range kinds {
		switch k {
		case "chan send", "chan receive", "select":
			chans = true
		case "cond", "waitgroup", "sema":
			waits = true
		}
	}
	switch {
	case chans:
		return "lock-chan-cycle"
	case waits:
		return "lock-wait-cycle"
	case kinds["rlock"] && kinds["lock"] && !kinds[twoLocks]:
		return "rlock-writer"
	}
	return "lock-cycle"
}

// fedByFamily reports a goroutine its children or creator (able to run)
// can plausibly feed: anything but a lock, waiting for a child that can
// run; a receive or select at the top of its loop (or one call down), or
// a Cond a queue's Get waits on a few calls down (a client-go worker:
// worker → processNextItem → Get), fed by its creator.
func fedByFamily(x *waitGor) bool {
	if x.scc != 0 {
		return false
	}
	if x.viaChild && x.kind != "lock" && x.kind != "rlock" {
		return true // waiting for a child that can still run: its result or Done comes
	}
	d := waitDepth(x.site.frames)
	switch x.kind {
	case "chan receive", "select":
		return d <= 1
	case "cond":
		return d <= 2
	}
	return false
}

// waitDepth counts the program's calls between a goroutine's entry
// function and the frame it is parked in: 0 when it waits in its entry
// function (a worker's loop), 1 in a function that calls directly (a
// queue's Get). Idle workers wait at the top of their loop; a worker
// stuck in the middle of a job waits deeper.
func waitDepth(frames []Frame) int {
	_, loc := locationFrame(frames)
	if loc < 0 {
		return 0
	}
	n := -1
	for _, f := range frames[loc:] {
		if !isRuntime(f.Function) && !gosym.Wrapper(f.Function) && f.Function != "runtime.goexit" {
			n++
		}
	}
	return max(n, 0)
}

// machineryFrame names a machinery goroutine by the frame that waits:
// the test runner's testing.(*T).Run rather than the generated main.main.
func machineryFrame(s *site) Frame {
	for _, f := range s.frames {
		if strings.HasPrefix(f.Function, "testing.") {
			return f
		}
	}
	return s.loc
}

// consumerSide reports waits that idle pools and servers sit in: a
// receive, a select, a Cond.
func consumerSide(kind string) bool {
	return kind == "chan receive" || kind == "select" || kind == "cond"
}

// idlePool reports a group shaped like a pool of idle workers: several
// goroutines waiting to consume, whose owner can still feed them.
func (f *stuckFacts) idlePool() bool {
	if !consumerSide(f.kind) || f.parked == 0 || f.inCycle > 0 {
		return false
	}
	if 2*f.byFamily >= f.parked {
		return true
	}
	if f.unreached > 0 && f.decided == f.unreached || f.byProgram == f.parked {
		return false // the program shows what can feed them, or that nothing can
	}
	// Waiting at the top of their own loop (or in the main goroutine)
	// while other goroutines of the program run: a pool, server loop or
	// main those may feed or end through state the frames do not show
	// (a global, a handler's closure). A worker that woke and parked
	// again looks the same in every dump.
	return (f.depth == 0 || f.mainGoroutine) && f.kind != "cond" && (f.liveElsewhere || f.familyProducer > 0)
}

// formatObjects names a few objects for evidence texts, each with the
// frame and parameter it was read from.
func formatObjects(objs []uint64, at []argRef) string {
	var parts []string
	for i, o := range objs {
		parts = append(parts, waitObjectText(o, at[i]))
	}
	return strings.Join(parts, ", ")
}

// waitObjectText names one object and where its word was read.
func waitObjectText(o uint64, at argRef) string {
	if s := at.String(); s != "" {
		return fmt.Sprintf("%#x (%s)", o, s)
	}
	return fmt.Sprintf("%#x", o)
}
