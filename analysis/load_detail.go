package analysis

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
	"github.com/leakscope/leakscope/internal/format"
)

// maxDetail bounds the goroutines of the latest snapshot kept one by one
// for the wait-for reasoning; a bigger snapshot gets persistence by site
// only.
const maxDetail = 250_000

// gor is one goroutine of the latest dump snapshot, as the stuck verdicts
// read it.
type gor struct {
	goid, creator int64
	stack         int64
	state         string // normalised wait reason
	wait          int64  // minutes, as printed
	leaked        bool   // the runtime marked it "(leaked)"
	// since is the earliest snapshot from which the goroutine was seen
	// parked identically (same stack and state) in every snapshot up to
	// the latest; the latest snapshot's time when it was not seen before.
	since int64
	block blockInfo
	// words are the distinct certain pointer words its frames printed
	// (none marked "?"), and wordRefs where each was first read; args
	// every one of them by frame and position.
	words    []uint64
	wordRefs []argRef
	args     []frameWord
	// ticket is the Cond ticket its runtime_notifyListWait frame printed
	// (the count of Waits on that Cond before its own), -1 when it waits
	// on no Cond or the word is unsure.
	ticket int64
	// woken, when not empty, says how the snapshot before shows this
	// goroutine woke since (a new Cond ticket, a wait time that started
	// again): the runtime's own counters.
	woken string
	// visible is set when a wake-up between the two latest snapshots
	// would have shown in its line: it waits on a Cond whose ticket both
	// printed, or it had waited a minute or more (the count starts again
	// when it parks again). Persistence counts only for such goroutines.
	visible bool
	// dumping, when not empty, says why the goroutine is the one taking
	// the dump (sending the process SIGQUIT): it is not counted as able
	// to run.
	dumping string
	// sleepNS is the duration passed to time.Sleep when it sleeps (0
	// when unknown).
	sleepNS int64
	site    *site
}

// frameWord is a certain pointer word a frame printed at a position of
// its arguments.
type frameWord struct {
	frame, pos int
	v          uint64
}

// blockInfo is what a goroutine waits on, from its frames' arguments.
type blockInfo struct {
	// obj is the object of the blocking frame (the channel, mutex,
	// WaitGroup, Cond or semaphore), 0 when the dump does not show it.
	obj   uint64
	objAt argRef
	// via are the certain pointer words of the first frame outside the
	// runtime and sync (the call that blocked): what it reached the
	// object through; viaAt where each was read.
	via   []uint64
	viaAt []argRef
}

// snapDetail is the per-goroutine view of the latest dump snapshot and
// how the process changed since the one before.
type snapDetail struct {
	ts, prevTS int64
	gs         []*gor
	byGoid     map[int64]*gor
	// came, went and moved count goroutines outside the runtime and the
	// profiler that appeared, disappeared or changed stack or state
	// between the two latest snapshots.
	came, went, moved int
	// truncated is set when the latest snapshot had more than maxDetail
	// goroutines: gs holds none of them.
	truncated bool
	// allAsleep, when not empty, names the traceback in which the
	// runtime stopped the program because all goroutines were asleep
	// (see [allAsleepCrash]).
	allAsleep string
}

// progressed reports whether the process did anything between its two
// latest snapshots.
func (sd *snapDetail) progressed() bool { return sd.came+sd.went+sd.moved > 0 }

// stackInfo caches, per stack, the frames that name what a goroutine
// waits on.
type stackInfo struct {
	objFrames []int  // frames whose first word is the wait object, leaf first
	userFrame int    // the blocking call outside the runtime, -1 if none
	runtime   []bool // per frame: in the runtime or sync, whose unsure words are stale registers
	sleep     int    // the time.Sleep frame, -1 if none
	notify    int    // the runtime_notifyListWait frame (a Cond wait), -1 if none
	fns       []string
	observer  bool // machinery (runtime, profiler, test runner, server plumbing): not the program's work
}

// track is a goroutine's last sighting while the rows are read.
type track struct {
	stack      int64
	state      string
	ticket     int64 // Cond ticket, -1 when none or unsure
	wait       int64 // minutes, as printed
	since, ts  int64
	observer   bool
	inLatest   bool
	prevLatest bool
}

// readDetail reads the goroutines table once more for the latest snapshot
// goroutine by goroutine (state, wait, frame arguments) and for how long
// each was parked identically, assigning each to its site.
func readDetail(b *bundle.Bundle, mem memory.Allocator, d *dumpData, st *stackTable, sites []*site) (*snapDetail, error) {
	n := len(d.snapshots)
	if n == 0 {
		return nil, nil
	}
	dr := newDetailReader(d, st, sites)
	err := b.ReadTable(schema.TableGoroutines, mem, func(rec arrow.Record) error {
		dr.last = lastRow{}
		c := cols{rec}
		tsCol, goidCol := c.i64(schema.ColSnapshotTS), c.i64(schema.ColGoid)
		stateCol, waitCol := c.str(schema.ColState), c.i64(schema.ColWaitMinutes)
		stackCol, cgCol, cfCol := c.i64(schema.ColStackID), c.i64(schema.ColCreatorGoid), c.str(schema.ColCreatorFunction)
		args := c.strLists(schema.ColFrameArgs)
		for r := 0; r < int(rec.NumRows()); r++ {
			dr.row(detailRow{ts: tsCol(r), goid: goidCol(r), stack: stackCol(r), raw: stateCol(r), wait: waitCol(r),
				creatorGoid: cgCol(r), creator: cfCol(r), args: args, r: r})
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read goroutines: %w", err)
	}
	sd := dr.sd
	for _, t := range dr.tracks {
		if t.ts == sd.prevTS && !t.inLatest && !t.observer && sd.prevTS != 0 {
			sd.went++
		}
	}
	sort.Slice(sd.gs, func(i, j int) bool { return sd.gs[i].goid < sd.gs[j].goid })
	return sd, nil
}

// detailReader is readDetail's state across the rows it reads.
type detailReader struct {
	d      *dumpData
	st     *stackTable
	sd     *snapDetail
	prevOf map[int64]int64
	siteOf map[*rawGroup]*site
	infos  map[int64]*stackInfo
	tracks map[int64]*track
	in     interner
	cur    int64
	// last caches what the row before looked up, as rows come in runs
	// of one snapshot and one stack; reset for every batch.
	last lastRow
	// gors is where the latest snapshot's goroutines are allocated, in
	// one block; a row past its end gets its own.
	gors []gor
}

// lastRow is what [detailReader.row] looked up for the row before it.
type lastRow struct {
	ok         bool
	ts, prev   int64 // a snapshot and the one before it
	stack      int64
	si         *stackInfo
	key        groupKey
	site       *site
	siteCached bool
}

// detailRow is one goroutines row as readDetail reads it.
type detailRow struct {
	ts, goid, stack, wait, creatorGoid int64
	raw, creator                       string
	args                               func(int, func(int, string))
	r                                  int
}

// newDetailReader prepares to read the rows of d's snapshots.
func newDetailReader(d *dumpData, st *stackTable, sites []*site) *detailReader {
	n := len(d.snapshots)
	dr := &detailReader{d: d, st: st, prevOf: map[int64]int64{}, siteOf: map[*rawGroup]*site{},
		infos: map[int64]*stackInfo{}, tracks: map[int64]*track{}, in: interner{}}
	dr.sd = &snapDetail{ts: d.snapshots[n-1], byGoid: map[int64]*gor{}}
	for i := 1; i < n; i++ {
		dr.prevOf[d.snapshots[i]] = d.snapshots[i-1]
	}
	if n > 1 {
		dr.sd.prevTS = d.snapshots[n-2]
	}
	dr.sd.truncated = d.totals[dr.sd.ts] > maxDetail
	if n := d.totals[dr.sd.ts]; !dr.sd.truncated {
		dr.sd.byGoid = make(map[int64]*gor, n)
		dr.sd.gs = make([]*gor, 0, n)
		dr.gors = make([]gor, n)
	}
	for _, s := range sites {
		s.exact = true
		for _, g := range s.groups {
			dr.siteOf[g] = s
		}
	}
	return dr
}

// row follows one goroutine row: its track (since when it has been
// parked identically, whether it woke), the process's churn between the
// two latest snapshots, and, in the latest, the goroutine itself.
func (dr *detailReader) row(x detailRow) {
	sd, ts, goid, stack := dr.sd, x.ts, x.goid, x.stack
	prev := dr.prevSnapshot(ts)
	if ts > dr.cur {
		pruneTracks(dr.tracks, prev)
		dr.cur = ts
	}
	state := dr.in.get(normState(x.raw))
	si := dr.stackInfo(stack)
	t := dr.tracks[goid]
	ticket := si.ticketOf(x.args, x.r)
	since, woken, visible := t.parkedSince(goid, ts, prev, stack, state, ticket, x.wait)
	if t == nil {
		t = &track{}
		dr.tracks[goid] = t
	}
	if ts == sd.ts && t.ts == sd.prevTS && sd.prevTS != 0 {
		t.prevLatest = true
		if !si.observer && (t.stack != stack || t.state != state) {
			sd.moved++
		}
	}
	t.stack, t.state, t.since, t.ts, t.observer, t.ticket, t.wait = stack, state, since, ts, si.observer, ticket, x.wait
	site := dr.siteFor(groupKey{state: state, stackID: stack, creator: x.creator})
	if since < ts && site != nil {
		// Parked here in the snapshot before too, by goid: the exact
		// survival the growth verdict weighs.
		site.exactSurvived++
	}
	if ts != sd.ts {
		return
	}
	t.inLatest = true
	g := dr.newGor()
	*g = gor{goid: goid, creator: x.creatorGoid, stack: stack, wait: x.wait, since: since, state: state,
		leaked: strings.Contains(x.raw, "(leaked)"), ticket: ticket, woken: woken, visible: visible}
	if site != nil {
		g.site = site
		site.persist.add(g, sd.ts)
	}
	if !si.observer && !t.prevLatest && sd.prevTS != 0 {
		sd.came++
	}
	if sd.truncated {
		return
	}
	si.readWords(x.args, x.r, g)
	sd.gs = append(sd.gs, g)
	sd.byGoid[goid] = g
}

// prevSnapshot returns the snapshot before ts (0 for the first).
func (dr *detailReader) prevSnapshot(ts int64) int64 {
	if !dr.last.ok || dr.last.ts != ts {
		dr.last.ok, dr.last.ts, dr.last.prev = true, ts, dr.prevOf[ts]
	}
	return dr.last.prev
}

// stackInfo returns a stack's stackInfo, made on first sight.
func (dr *detailReader) stackInfo(stack int64) *stackInfo {
	if dr.last.si != nil && dr.last.stack == stack {
		return dr.last.si
	}
	si := dr.infos[stack]
	if si == nil {
		si = newStackInfo(dr.st.framesOf(stack))
		dr.infos[stack] = si
	}
	dr.last.stack, dr.last.si = stack, si
	return si
}

// siteFor returns the site of a group's rows, nil when it has none.
func (dr *detailReader) siteFor(k groupKey) *site {
	if !dr.last.siteCached || dr.last.key != k {
		dr.last.key, dr.last.site, dr.last.siteCached = k, dr.siteOf[dr.d.groups[k]], true
	}
	return dr.last.site
}

// newGor returns a goroutine of the latest snapshot to fill in.
func (dr *detailReader) newGor() *gor {
	if len(dr.gors) == 0 {
		return &gor{}
	}
	g := &dr.gors[0]
	dr.gors = dr.gors[1:]
	return g
}

// parkedSince compares a goroutine's row at ts with its last sighting t
// (nil: none): since is the earliest snapshot from which it was parked
// identically (ts when it was not in the snapshot before, prev, at the
// same stack and state, or the runtime's counters show it woken: woken
// says how); visible whether a wake-up would have shown in its line.
func (t *track) parkedSince(goid, ts, prev, stack int64, state string, ticket, wait int64) (since int64, woken string, visible bool) {
	if t == nil || prev == 0 || t.ts != prev || t.stack != stack || t.state != state {
		return ts, "", false
	}
	visible = ticket >= 0 && t.ticket >= 0 || t.wait >= 1
	if woken = wokeBetween(goid, t, ticket, wait); woken != "" {
		return ts, woken, visible
	}
	return t.since, "", visible
}

// wokeBetween says how a goroutine seen at the same stack and state in
// two consecutive snapshots shows it woke in between, "" when nothing
// shows it: its Cond ticket changed (every Wait takes a new one), or the
// runtime's count of its waiting minutes went down (it parked again).
func wokeBetween(goid int64, t *track, ticket, wait int64) string {
	switch {
	case ticket >= 0 && t.ticket >= 0 && ticket != t.ticket:
		return fmt.Sprintf("goroutine %d took Cond ticket %#x, then %#x (sync.runtime_notifyListWait's t): it was woken and waited again", goid, t.ticket, ticket)
	case wait < t.wait:
		return fmt.Sprintf("goroutine %d had waited %s, then %d: it was woken and parked again", goid, format.Count(int64(t.wait), "minute"), wait)
	}
	return ""
}

// pruneTracks forgets goroutines last seen before keep, so the map holds
// about two snapshots.
func pruneTracks(tracks map[int64]*track, keep int64) {
	for id, t := range tracks {
		if t.ts < keep {
			delete(tracks, id)
		}
	}
}

// waitFrames name the frames whose first argument word is the object a
// goroutine waits on, as debug=2 dumps (sync) and tracebacks (runtime)
// print them.
var waitFrames = map[string]bool{
	"runtime.chansend": true, "runtime.chansend1": true,
	"runtime.chanrecv": true, "runtime.chanrecv1": true, "runtime.chanrecv2": true,
	"runtime.semacquire1": true, "runtime.notifyListWait": true,
	"internal/sync.(*Mutex).lockSlow": true, "sync.(*Mutex).lockSlow": true,
	"internal/sync.(*Mutex).Lock": true, "sync.(*Mutex).Lock": true,
	"sync.(*RWMutex).Lock": true, "sync.(*RWMutex).RLock": true,
	"sync.(*WaitGroup).Wait": true, "sync.(*Cond).Wait": true, "sync.runtime_notifyListWait": true,
	"sync.(*Once).doSlow": true, "golang.org/x/sync/semaphore.(*Weighted).Acquire": true,
}

func newStackInfo(frames []Frame) *stackInfo {
	si := &stackInfo{userFrame: -1, runtime: make([]bool, len(frames)), sleep: -1, notify: -1, fns: make([]string, len(frames))}
	for i, f := range frames {
		fn := f.Function
		si.fns[i] = fn
		si.runtime[i] = isRuntime(fn)
		if (fn == "sync.runtime_notifyListWait" || fn == "runtime.notifyListWait") && si.notify < 0 {
			si.notify = i
		}
		if fn == "time.Sleep" && si.sleep < 0 {
			si.sleep = i
		}
		if strings.HasPrefix(fn, "runtime/pprof.") || strings.HasPrefix(fn, "net/http/pprof.") || strings.HasPrefix(fn, "runtime/trace.") {
			si.observer = true
		}
		if waitFrames[fn] && si.userFrame < 0 {
			si.objFrames = append(si.objFrames, i)
		}
		if si.userFrame < 0 && !isRuntime(fn) {
			si.userFrame = i
		}
	}
	if isInfraStack(frames) {
		si.observer = true
	}
	return si
}

// readWords reads row r's frame arguments into g: the wait object, the
// blocking call's words, every distinct pointer word, the Cond ticket and
// the sleep's duration, each word with the frame and position it was
// read from. Words the runtime marks unsure ("?") are left out: a stale
// register names no object. Words in the binary's image (string
// literals, types, itabs) do not identify what a call reached, so they
// are left out of its via words.
func (si *stackInfo) readWords(args func(int, func(int, string)), r int, g *gor) {
	var buf [8]word
	g.ticket = -1
	args(r, func(i int, s string) {
		fn := ""
		if i < len(si.fns) {
			fn = si.fns[i]
		}
		if i == si.sleep {
			g.sleepNS = sleepDuration(s)
		}
		if i == si.notify {
			if t, ok := wordAt(s, 1); ok {
				g.ticket = int64(t)
			}
		}
		if g.dumping == "" && g.state != "" && waitKind(g.state, nil) == "" {
			if why := dumpingFrame(fn, s); why != "" {
				g.dumping = fmt.Sprintf("goroutine %d sends the process its SIGQUIT: %s", g.goid, why)
			}
		}
		if g.block.obj == 0 && slices.Contains(si.objFrames, i) {
			if v, ok := firstWord(s); ok && v >= minPointer && v < maxPointer {
				g.block.obj, g.block.objAt = v, argRef{fn: fn}
			}
		}
		for _, w := range pointerWords(s, buf[:0]) {
			if w.unsure {
				continue
			}
			g.args = append(g.args, frameWord{frame: i, pos: w.pos, v: w.v})
			ref := argRef{fn: fn, pos: w.pos}
			if i == si.userFrame && w.v >= staticLimit && !slices.Contains(g.block.via, w.v) {
				g.block.via = append(g.block.via, w.v)
				g.block.viaAt = append(g.block.viaAt, ref)
			}
			if !slices.Contains(g.words, w.v) {
				g.words = append(g.words, w.v)
				g.wordRefs = append(g.wordRefs, ref)
			}
		}
	})
}

// ticketOf reads the Cond ticket of row r when its stack waits on a
// Cond, -1 otherwise.
func (si *stackInfo) ticketOf(args func(int, func(int, string)), r int) int64 {
	if si.notify < 0 {
		return -1
	}
	t := int64(-1)
	args(r, func(i int, s string) {
		if i == si.notify {
			if v, ok := wordAt(s, 1); ok {
				t = int64(v)
			}
		}
	})
	return t
}

// sleepDuration reads time.Sleep's printed argument (nanoseconds in hex),
// 0 when it is not certain.
func sleepDuration(args string) int64 {
	if strings.HasSuffix(args, "?") || !strings.HasPrefix(args, "0x") {
		return 0
	}
	v, err := strconv.ParseInt(args[2:], 16, 64)
	if err != nil {
		return 0
	}
	return v
}

// staticLimit: addresses below it are in the binary's image (globals,
// type descriptors, itabs), where neighbours are unrelated; they match
// only exactly.
const staticLimit = 1 << 28

// waitKind maps a wait reason to the kind of object waited on; "" for a
// goroutine that can run.
func waitKind(state string, frames []Frame) string {
	switch {
	case strings.HasPrefix(state, "chan send (nil chan)"), strings.HasPrefix(state, "chan receive (nil chan)"):
		return "nil"
	case state == "select (no cases)":
		return "forever"
	case strings.HasPrefix(state, "chan send"):
		return "chan send"
	case strings.HasPrefix(state, "chan receive"):
		return "chan receive"
	case state == "select":
		return "select"
	case state == "sync.Mutex.Lock", state == "sync.RWMutex.Lock":
		return "lock"
	case state == "sync.RWMutex.RLock":
		return "rlock"
	case state == "sync.WaitGroup.Wait":
		return "waitgroup"
	case state == "sync.Cond.Wait":
		return "cond"
	case state == "semacquire":
		return semaKind(frames)
	}
	return ""
}

// semaKind is the kind of a `semacquire` wait: a WaitGroup, a lock, a
// semaphore of the program's, or none when it waits for the runtime's
// own semaphore (a GC cycle an allocation assists, a stop of the world),
// which the runtime releases: it runs once that ends. Code outside the
// runtime reaches a semaphore only through the functions the runtime
// links into sync and internal/poll (runtime_Semacquire…), which every
// traceback prints; a dump that hides the runtime's frames shows a GC
// wait as `semacquire` at an allocation of the program's, with none of
// them. Without frames the kind is "sema".
func semaKind(frames []Frame) string {
	linked := len(frames) == 0
	for _, f := range frames {
		switch {
		case gcWait(f.Function):
			return "" // waits for a GC cycle (an allocation's assist, runtime.GC): it runs once the cycle ends
		case strings.HasPrefix(f.Function, "sync.(*WaitGroup)."):
			return "waitgroup"
		case strings.Contains(f.Function, "Mutex)."):
			return "lock"
		case semaLink(f.Function):
			linked = true
		}
	}
	if !linked {
		return ""
	}
	return "sema"
}

// semaLink reports the functions the runtime links into other packages
// for them to wait on a semaphore (sync.runtime_Semacquire,
// internal/poll.runtime_Semacquire, sync.runtime_SemacquireWaitGroup, …).
func semaLink(fn string) bool {
	return strings.HasPrefix(fn[strings.LastIndexByte(fn, '.')+1:], "runtime_Semacquire")
}

// gcWait reports the runtime functions a goroutine waiting for a garbage
// collection cycle is parked in (gcStart under mallocgc, runtime.GC).
func gcWait(fn string) bool {
	switch fn {
	case "runtime.gcStart", "runtime.GC", "runtime.gcWaitOnMark", "runtime.stopTheWorld", "runtime.stopTheWorldGC":
		return true
	}
	return false
}

// isInfraStack reports goroutines that are machinery rather than the
// program's work: the runtime, the profiler answering, the test runner,
// signal delivery, and a server's accept loop and idle connections.
func isInfraStack(frames []Frame) bool {
	if len(frames) == 0 {
		return true
	}
	user := false
	for _, f := range frames {
		fn := f.Function
		switch {
		case isGoWrapper(fn):
		case strings.HasPrefix(fn, "runtime/pprof."), strings.HasPrefix(fn, "net/http/pprof."), strings.HasPrefix(fn, "runtime/trace."),
			strings.HasPrefix(fn, "os/signal."):
			return true
		case strings.HasSuffix(f.File, "_testmain.go"), strings.HasPrefix(fn, "testing."):
		case strings.HasPrefix(fn, "net/http.") || strings.HasPrefix(fn, "net.") || strings.HasPrefix(fn, "bufio.") ||
			strings.HasPrefix(fn, "crypto/tls."):
		case isRuntime(fn):
		default:
			user = true
		}
	}
	return !user
}

// isGoWrapper reports the wrapper the compiler makes for `go f(x)`
// ("main.init.0.gowrap1"): it names the go statement, not work of its own.
func isGoWrapper(fn string) bool {
	i := strings.LastIndex(fn, ".gowrap")
	if i < 0 {
		return false
	}
	for _, c := range fn[i+len(".gowrap"):] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return i+len(".gowrap") < len(fn)
}
