package analysis

import (
	"cmp"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/leakscope/leakscope/analysis/internal/tables"
)

// site is a goroutine leak candidate: every group parked in the same
// state at the same location with the same creator, across snapshots.
type site struct {
	state    string
	rawState string
	loc      Frame
	creator  string
	groups   []*rawGroup
	counts   []float64 // per snapshot of the bundle
	frames   []Frame   // representative stack, leaf first
	stackID  int64
	entry    string

	survived, prevCount int64
	// exactSurvived counts members parked here in the snapshot before
	// too, by goid (set when exact, from readDetail); survived only
	// compares goids with the previous snapshot's largest, which the
	// runtime's per-P goid batches defeat.
	exactSurvived   int64
	exact           bool
	maxWait, leaked int64
	maxWaitTS       int64
	goids           []int64
	spread          []int64 // uniform sample of the latest snapshot's members
	creatorGoids    map[int64]int64
	creatorStackID  int64
	labels          string
	fromProfile     bool    // built from goroutine profile counts, not dumps
	profileStacks   []int64 // the goroutine profile stacks of such a site
	// ts, when set, are the site's own snapshot times: the agent's
	// history (the first histPoints counts) followed by the dumps'.
	ts         []int64
	histPoints int

	// persist is how the members of the latest dump snapshot had been
	// parked (filled by readDetail).
	persist persistStat
	// only, for a site parted by splitMixed, says which of its groups'
	// goroutines in the latest snapshot are its members (nil: all).
	only *memberSet
}

// handedOn counts, for a lock wait whose members are known by goid
// across dump snapshots, the members of every snapshot but the last that
// were no longer waiting here in the next one (they got the lock), out
// of prev. A stuck lock keeps every waiter; a contended one hands it on.
func (s *site) handedOn() (left, prev int64) {
	if k := waitKind(s.state, s.frames); k != "lock" && k != "rlock" || !s.exact || s.fromProfile || s.prevCount == 0 {
		return 0, 0
	}
	return max(0, s.prevCount-s.exactSurvived), s.prevCount
}

// persistStat sums up how long the members of a site in the latest dump
// snapshot had been parked identically.
type persistStat struct {
	members   int   // in the latest snapshot
	persisted int   // of them, parked identically in the snapshot before too
	visible   int   // of those, ones whose wake-up would have shown (gor.visible)
	woken     int   // of them, seen woken since the snapshot before (gor.woken)
	spanNS    int64 // summed over persisted members: latest snapshot − since
	leaked    int   // of them, marked "(leaked)" by the runtime
}

func (p *persistStat) add(g *gor, ts int64) {
	p.members++
	if g.since < ts {
		p.persisted++
		p.spanNS += ts - g.since
		if g.visible {
			p.visible++
		}
	}
	if g.woken != "" {
		p.woken++
	}
	if g.leaked {
		p.leaked++
	}
}

// meanSpan is how long, on average, persisted members had been parked
// identically, in seconds.
func (p *persistStat) meanSpan() float64 {
	if p.persisted == 0 {
		return 0
	}
	return float64(p.spanNS) / float64(p.persisted) / 1e9
}

type siteKey struct {
	state, fn string
	line      int
	creator   string
}

// buildSites merges dump groups by location and creator and lays their
// counts on the bundle's snapshot times.
func buildSites(d *dumpData, st *stackTable) []*site {
	idx := map[int64]int{}
	for i, ts := range d.snapshots {
		idx[ts] = i
	}
	byKey := map[siteKey]*site{}
	var out []*site
	for _, g := range sortedGroups(d.groups) {
		frames := st.framesOf(g.key.stackID)
		loc, _ := locationFrame(frames)
		k := siteKey{g.key.state, loc.Function, loc.Line, g.key.creator}
		s := byKey[k]
		if s == nil {
			s = &site{state: g.key.state, rawState: g.rawState, loc: loc, creator: g.key.creator,
				counts: make([]float64, len(d.snapshots)), creatorGoids: map[int64]int64{}}
			byKey[k] = s
			out = append(out, s)
		}
		s.groups = append(s.groups, g)
		for ts, ss := range g.snaps {
			i := idx[ts]
			s.counts[i] += float64(ss.count)
			if i > 0 {
				s.survived += ss.survived
			}
		}
		if g.maxWait > s.maxWait || g.maxWait == s.maxWait && g.maxWaitTS > s.maxWaitTS {
			s.maxWait, s.maxWaitTS = g.maxWait, g.maxWaitTS
		}
		s.leaked += g.leaked
		if s.labels == "" {
			s.labels = g.labels
		}
		for cg, n := range g.creatorGoids {
			s.creatorGoids[cg] += n
		}
		if s.creatorStackID == 0 {
			s.creatorStackID = g.creatorStackID
		}
	}
	for _, s := range out {
		// prevCount: members of a snapshot whose next snapshot exists, so
		// survival compares like with like.
		for i := 0; i+1 < len(s.counts); i++ {
			s.prevCount += int64(s.counts[i])
		}
		// Representative: the group with the most members in the latest
		// snapshot it appears in.
		sort.Slice(s.groups, func(i, j int) bool {
			a, b := s.groups[i], s.groups[j]
			ca, cb := a.snaps[a.goidsTS].count, b.snaps[b.goidsTS].count
			if a.goidsTS != b.goidsTS {
				return a.goidsTS > b.goidsTS
			}
			if ca != cb {
				return ca > cb
			}
			return a.key.stackID < b.key.stackID
		})
		rep := s.groups[0]
		s.stackID = rep.key.stackID
		s.frames = st.framesOf(rep.key.stackID)
		s.entry = entryFunction(s.frames)
		for _, g := range s.groups {
			if g.goidsTS == rep.goidsTS {
				s.goids = append(s.goids, g.goids...)
				s.spread = append(s.spread, g.spread...)
			}
		}
		sort.Slice(s.goids, func(i, j int) bool { return s.goids[i] < s.goids[j] })
	}
	sortSites(out)
	return out
}

// sitesFromProfile builds sites from debug=0 goroutine (or goroutineleak)
// profile counts,
// for bundles without dumps. The wait reason is inferred from the frames
// and the creator is unknown.
func sitesFromProfile(series tables.StackSeries, times []int64, st *stackTable) []*site {
	idx := map[int64]int{}
	for i, ts := range times {
		idx[ts] = i
	}
	byKey := map[siteKey]*site{}
	var out []*site
	for _, stack := range slices.Sorted(maps.Keys(series)) {
		m := series[stack]
		frames := st.framesOf(stack)
		state := stateFromFrames(frames)
		loc, _ := locationFrame(frames)
		k := siteKey{state, loc.Function, loc.Line, ""}
		s := byKey[k]
		if s == nil {
			s = &site{state: state, rawState: state, loc: loc, counts: make([]float64, len(times)),
				fromProfile: true, frames: frames, stackID: stack, entry: entryFunction(frames), creatorGoids: map[int64]int64{}}
			byKey[k] = s
			out = append(out, s)
		}
		s.profileStacks = append(s.profileStacks, stack)
		for ts, v := range m {
			s.counts[idx[ts]] += float64(v[0])
		}
	}
	for _, s := range out {
		sort.Slice(s.profileStacks, func(i, j int) bool { return s.profileStacks[i] < s.profileStacks[j] })
	}
	sortSites(out)
	return out
}

// stateFromFrames infers a wait reason from the runtime frames at the leaf
// of a goroutine profile stack.
func stateFromFrames(frames []Frame) string {
	for _, f := range frames {
		fn := f.Function
		switch {
		case fn == "runtime.chansend" || fn == "runtime.chansend1":
			return "chan send"
		case fn == "runtime.chanrecv" || fn == "runtime.chanrecv1" || fn == "runtime.chanrecv2":
			return "chan receive"
		case fn == "runtime.selectgo":
			return "select"
		case fn == "runtime.block":
			return "select (no cases)"
		case strings.HasPrefix(fn, "sync.(*WaitGroup).Wait"):
			return "sync.WaitGroup.Wait"
		case strings.HasPrefix(fn, "sync.(*RWMutex).RLock"):
			return "sync.RWMutex.RLock"
		case strings.HasPrefix(fn, "sync.(*RWMutex).Lock"):
			return "sync.RWMutex.Lock"
		case strings.HasPrefix(fn, "sync.(*Mutex).Lock"), strings.HasPrefix(fn, "internal/sync.(*Mutex).Lock"):
			return "sync.Mutex.Lock"
		case strings.HasPrefix(fn, "sync.(*Cond).Wait"):
			return "sync.Cond.Wait"
		case fn == "internal/poll.runtime_pollWait":
			return "IO wait"
		case fn == "time.Sleep":
			return "sleep"
		case fn == "syscall.Syscall" || fn == "syscall.Syscall6" || fn == "internal/runtime/syscall.Syscall6":
			return "syscall"
		}
		if !isRuntime(fn) {
			break
		}
	}
	return "running"
}

// The analysis's outputs must not depend on map iteration order or on
// scheduling: the same bundle gives the same report. Wherever a map is
// walked to build something whose order or first-wins fields matter,
// its keys are sorted first; every sort that can tie ends in siteCmp
// (or another total order).

// siteCmp is the total order sites fall back on when their scores tie:
// location, line, state, creator, then the representative stack.
func siteCmp(a, b *site) int {
	return cmp.Or(cmp.Compare(a.loc.Function, b.loc.Function), cmp.Compare(a.loc.Line, b.loc.Line),
		cmp.Compare(a.state, b.state), cmp.Compare(a.creator, b.creator), cmp.Compare(a.entry, b.entry),
		cmp.Compare(a.stackID, b.stackID))
}

// sortSites puts sites in siteCmp order.
func sortSites(s []*site) { slices.SortFunc(s, siteCmp) }

// sortedGroups returns the dump groups in a fixed order: stack, state,
// creator.
func sortedGroups(m map[groupKey]*rawGroup) []*rawGroup {
	keys := make([]groupKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b groupKey) int {
		return cmp.Or(cmp.Compare(a.stackID, b.stackID), cmp.Compare(a.state, b.state), cmp.Compare(a.creator, b.creator))
	})
	out := make([]*rawGroup, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// leakSites returns, for the last goroutineleak profile in the bundle, the
// leaked goroutine count per location (function and line of the location
// frame).
func leakSites(p *tables.ProfileData, st *stackTable) (map[Frame]int64, int64) {
	if len(p.LeakTS) == 0 {
		return nil, 0
	}
	last := p.LeakTS[len(p.LeakTS)-1]
	out := map[Frame]int64{}
	var total int64
	for stack, m := range p.Leak {
		v, ok := m[last]
		if !ok || v[0] == 0 {
			continue
		}
		loc, _ := locationFrame(st.framesOf(stack))
		out[Frame{Function: loc.Function, Line: loc.Line}] += v[0]
		total += v[0]
	}
	return out, total
}
