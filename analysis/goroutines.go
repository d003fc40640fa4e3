package analysis

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
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
	// words are the distinct pointer words its frames printed.
	words []uint64
	// sleepNS is the duration passed to time.Sleep when it sleeps (0
	// when unknown).
	sleepNS int64
	site    *site
}

// blockInfo is what a goroutine waits on, from its frames' arguments.
type blockInfo struct {
	// obj is the object of the blocking frame (the channel, mutex,
	// WaitGroup, Cond or semaphore), 0 when the dump does not show it.
	obj uint64
	// via are the pointer words of the first frame outside the runtime
	// and sync (the call that blocked): what it reached the object
	// through.
	via []uint64
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
	observer  bool   // machinery (runtime, profiler, test runner, server plumbing): not the program's work
}

// track is a goroutine's last sighting while the rows are read.
type track struct {
	stack      int64
	state      string
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
	sd := &snapDetail{ts: d.snapshots[n-1], byGoid: map[int64]*gor{}}
	prevOf := map[int64]int64{}
	for i := 1; i < n; i++ {
		prevOf[d.snapshots[i]] = d.snapshots[i-1]
	}
	if n > 1 {
		sd.prevTS = d.snapshots[n-2]
	}
	sd.truncated = d.totals[sd.ts] > maxDetail
	siteOf := map[*rawGroup]*site{}
	for _, s := range sites {
		s.exact = true
		for _, g := range s.groups {
			siteOf[g] = s
		}
	}
	infos := map[int64]*stackInfo{}
	tracks := map[int64]*track{}
	in := interner{}
	var cur int64
	err := b.ReadTable(schema.TableGoroutines, mem, func(rec arrow.Record) error {
		c := cols{rec}
		tsCol, goidCol := c.i64(schema.ColSnapshotTS), c.i64(schema.ColGoid)
		stateCol, waitCol := c.str(schema.ColState), c.i64(schema.ColWaitMinutes)
		stackCol, cgCol, cfCol := c.i64(schema.ColStackID), c.i64(schema.ColCreatorGoid), c.str(schema.ColCreatorFunction)
		argsCol := c.strLists(schema.ColFrameArgs)
		for r := 0; r < int(rec.NumRows()); r++ {
			ts, goid, stack := tsCol(r), goidCol(r), stackCol(r)
			if ts > cur {
				pruneTracks(tracks, prevOf[ts])
				cur = ts
			}
			raw := stateCol(r)
			state := in.get(normState(raw))
			si := infos[stack]
			if si == nil {
				si = newStackInfo(st.framesOf(stack))
				infos[stack] = si
			}
			t := tracks[goid]
			since := ts
			if t != nil && t.ts == prevOf[ts] && prevOf[ts] != 0 && t.stack == stack && t.state == state {
				since = t.since
			}
			if t == nil {
				t = &track{}
				tracks[goid] = t
			}
			if ts == sd.ts && t.ts == sd.prevTS && sd.prevTS != 0 {
				t.prevLatest = true
				if !si.observer && (t.stack != stack || t.state != state) {
					sd.moved++
				}
			}
			t.stack, t.state, t.since, t.ts, t.observer = stack, state, since, ts, si.observer
			if since < ts {
				// Parked here in the snapshot before too, by goid: the
				// exact survival the growth verdict weighs.
				if site := siteOf[d.groups[groupKey{state: state, stackID: stack, creator: cfCol(r)}]]; site != nil {
					site.exactSurvived++
				}
			}
			if ts != sd.ts {
				continue
			}
			t.inLatest = true
			g := &gor{goid: goid, creator: cgCol(r), stack: stack, wait: waitCol(r), since: since,
				leaked: strings.Contains(raw, "(leaked)")}
			g.state = state
			if site := siteOf[d.groups[groupKey{state: state, stackID: stack, creator: cfCol(r)}]]; site != nil {
				g.site = site
				site.persist.add(g, sd.ts)
			}
			if !si.observer && !t.prevLatest && sd.prevTS != 0 {
				sd.came++
			}
			if sd.truncated {
				continue
			}
			g.block, g.words, g.sleepNS = si.wordsOf(argsCol, r)
			sd.gs = append(sd.gs, g)
			sd.byGoid[goid] = g
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read goroutines: %w", err)
	}
	for _, t := range tracks {
		if t.ts == sd.prevTS && !t.inLatest && !t.observer && sd.prevTS != 0 {
			sd.went++
		}
	}
	sort.Slice(sd.gs, func(i, j int) bool { return sd.gs[i].goid < sd.gs[j].goid })
	return sd, nil
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
	si := &stackInfo{userFrame: -1, runtime: make([]bool, len(frames)), sleep: -1}
	for i, f := range frames {
		fn := f.Function
		si.runtime[i] = isRuntime(fn)
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

// wordsOf reads row r's frame arguments: the wait object, the blocking
// call's words and every distinct pointer word. Words the runtime marks
// unsure ("?") count only in the program's own frames; words in the
// binary's image (string literals, types, itabs) do not identify what a
// call reached, so they are left out of its words.
func (si *stackInfo) wordsOf(args func(int, func(int, string)), r int) (blockInfo, []uint64, int64) {
	var b blockInfo
	var all []uint64
	var sleep int64
	var buf [8]word
	args(r, func(i int, s string) {
		if i == si.sleep {
			sleep = sleepDuration(s)
		}
		if b.obj == 0 {
			for _, k := range si.objFrames {
				if k == i {
					if v, ok := firstWord(s); ok {
						b.obj = v
					}
				}
			}
		}
		for _, w := range pointerWords(s, buf[:0]) {
			if w.unsure && (i >= len(si.runtime) || si.runtime[i]) {
				continue // a stale register in the runtime's frames
			}
			static := w.v < staticLimit
			if i == si.userFrame && !static {
				b.via = appendUnique(b.via, w.v)
			}
			if !static || !w.unsure {
				all = appendUnique(all, w.v)
			}
		}
	})
	return b, all, sleep
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

func appendUnique(s []uint64, v uint64) []uint64 {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}
