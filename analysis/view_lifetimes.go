package analysis

import (
	"fmt"
	"sort"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// defaultBars is the bar limit of [Lifetimes] when none is given.
const defaultBars = 2000

// lifetimes builds the lifetime view of [from, to] (the bundle's own
// range where zero): every goroutine's life from the dumps, traces and
// eBPF together, and the spans, at most limit bars, the longest first.
func lifetimes(b *bundle.Bundle, mem memory.Allocator, from, to time.Time, limit int) (*LifetimeView, error) {
	if limit <= 0 {
		limit = defaultBars
	}
	st, err := loadStacks(b, mem, nil)
	if err != nil {
		return nil, err
	}
	d, err := readDumps(b, mem, true)
	if err != nil {
		return nil, err
	}
	tg, err := readTraceGoroutines(b, mem)
	if err != nil {
		return nil, err
	}
	eg, err := readEBPFGoroutines(b, mem)
	if err != nil {
		return nil, err
	}
	spans, err := readSpans(b, mem)
	if err != nil {
		return nil, err
	}
	ls := dumpLives(d, st)
	ls.addTrace(tg)
	ls.addEBPF(eg)
	aliveAt, alive := ls.settle(d, dumpsTruncated(b.Manifest))
	lo, hi := viewWindow(b.Manifest, from, to)
	cands := rankBars(ls, spans, lo, hi)
	total := len(cands)
	if len(cands) > limit {
		cands = cands[:limit]
	}
	bars := ls.bars(cands, st)
	v := &LifetimeView{From: tsTime(lo), To: tsTime(hi), Total: total, Omitted: total - len(bars),
		AliveAt: tsTime(aliveAt), Alive: len(alive), alive: alive}
	if hi == 1<<63-1 {
		v.To = time.Time{}
	}
	sort.SliceStable(bars, func(i, j int) bool { return bars[i].Start.Before(bars[j].Start) })
	v.Bars = bars
	if v.Bars == nil {
		v.Bars = []Bar{}
	}
	v.Groups = groupBars(v.Bars)
	v.MarkVerdicts(nil)
	return v, nil
}

// life is one goroutine's lifetime as the sources together show it.
type life struct {
	start, end int64
	name       string
	state      string
	parent     int64
	creation   int64 // creation stack (trace or eBPF), for an unknown entry
	// lost is when the eBPF probes that saw it created were detached,
	// for one no source saw end; endUnknown marks an end taken from it.
	lost       int64
	endUnknown bool
}

// lives are the goroutines' lifetimes by goid, and which the dumps list.
type lives struct {
	byGoid  map[int64]*life
	inDumps map[int64]bool
}

// dumpLives starts the lifetimes from the dumps, which give presence
// between snapshots: from the first snapshot that shows a goroutine to
// the first one that no longer does. It releases d.goroutine.
func dumpLives(d *dumpData, st *stackTable) *lives {
	ls := &lives{byGoid: map[int64]*life{}, inDumps: map[int64]bool{}}
	next := map[int64]int64{}
	for i := 0; i+1 < len(d.snapshots); i++ {
		next[d.snapshots[i]] = d.snapshots[i+1]
	}
	stateOf := map[int64]string{}
	for _, g := range d.groups {
		if g.goidsTS != 0 {
			stateOf[g.key.stackID] = g.key.state
		}
	}
	entries := map[int64]string{}
	for goid, g := range d.goroutine {
		ls.inDumps[goid] = true
		e, ok := entries[g.stackID]
		if !ok {
			e = entryFunction(st.framesOf(g.stackID))
			entries[g.stackID] = e
		}
		ls.byGoid[goid] = &life{start: g.firstTS, end: next[g.lastTS], parent: g.creator, name: e, state: stateOf[g.stackID]}
	}
	d.goroutine = nil
	return ls
}

// get returns goid's lifetime, made on first sight.
func (ls *lives) get(goid int64) *life {
	l := ls.byGoid[goid]
	if l == nil {
		l = &life{}
		ls.byGoid[goid] = l
	}
	return l
}

// addTrace merges what the execution traces saw of each goroutine.
func (ls *lives) addTrace(tg map[int64]*traceG) {
	for goid, g := range tg {
		l := ls.get(goid)
		if g.created != 0 && (l.start == 0 || g.created < l.start) {
			l.start = g.created
		}
		if g.ended != 0 {
			l.end = g.ended
		}
		if l.name == "" {
			l.name = g.startFn
		}
		if l.parent == 0 {
			l.parent = g.parent
		}
		if g.ended == 0 && g.lastReason != "" {
			l.state = g.lastReason
		}
		if l.creation == 0 {
			l.creation = g.creationStack
		}
	}
}

// addEBPF merges what the eBPF probes saw of each goroutine.
func (ls *lives) addEBPF(eg map[int64]*ebpfG) {
	for goid, g := range eg {
		l := ls.get(goid)
		if g.created != 0 && (l.start == 0 || g.created < l.start) {
			l.start = g.created
		}
		if g.ended != 0 && l.end == 0 {
			l.end = g.ended
		}
		if l.parent == 0 {
			l.parent = g.parent
		}
		if l.creation == 0 {
			l.creation = g.stack
		}
		if g.lost != 0 && !ls.inDumps[goid] {
			l.lost = g.lost
		}
	}
}

// settle ends the lifetimes the dumps show ended and returns which are
// alive, and when. Alive means alive at the last dump when there are
// whole dumps: a dump lists every goroutine, so one the traces or eBPF
// saw but no later dump lists had ended by the next dump after its last
// sighting. One seen only by eBPF probes detached after its creation is
// last known alive when they were.
func (ls *lives) settle(d *dumpData, truncated bool) (int64, map[int64]bool) {
	var aliveAt int64
	if n := len(d.snapshots); n > 0 && !truncated {
		aliveAt = d.snapshots[n-1]
		for goid, l := range ls.byGoid {
			if l.end != 0 || ls.inDumps[goid] {
				continue
			}
			if i := sort.Search(n, func(i int) bool { return d.snapshots[i] > l.start }); i < n {
				l.end = d.snapshots[i]
			}
		}
	}
	alive := map[int64]bool{}
	for goid, l := range ls.byGoid {
		if l.end == 0 && l.lost != 0 {
			l.end, l.endUnknown = l.lost, true
		}
		// Alive at the last dump: begun by then (one created after it is
		// not yet in any dump) and not ended before it.
		if aliveAt != 0 && l.start > aliveAt {
			continue
		}
		if l.end == 0 || aliveAt != 0 && l.end > aliveAt {
			alive[goid] = true
		}
	}
	return aliveAt, alive
}

// viewWindow is the range a lifetime view covers: from and to, or the
// bundle's own start and end where they are zero.
func viewWindow(m bundle.Manifest, from, to time.Time) (lo, hi int64) {
	lo, hi = from.UnixNano(), to.UnixNano()
	if from.IsZero() {
		lo = m.Start.UnixNano()
		if m.Start.IsZero() {
			lo = 0
		}
	}
	if to.IsZero() {
		hi = 1<<63 - 1
		if !m.End.IsZero() {
			hi = m.End.UnixNano()
		}
	}
	return lo, hi
}

// barCand is a goroutine or span that may get a bar.
type barCand struct {
	start, end, id int64
	span           *spanRec
}

// rankBars lists the goroutines and spans inside [lo, hi], ranked
// before any bar is built: open-ended first (they are what a leak looks
// like), then longer before shorter; kind and id break ties so the
// order is stable.
func rankBars(ls *lives, spans []*spanRec, lo, hi int64) []barCand {
	in := func(start, end int64) bool { return (start == 0 || start <= hi) && (end == 0 || end >= lo) }
	var cands []barCand
	for goid, l := range ls.byGoid {
		if in(l.start, l.end) {
			cands = append(cands, barCand{start: max(l.start, lo), end: l.end, id: goid})
		}
	}
	for _, s := range spans {
		if in(s.start, s.end) {
			cands = append(cands, barCand{start: max(s.start, lo), end: s.end, id: s.id, span: s})
		}
	}
	dur := func(c barCand) int64 {
		if c.end == 0 {
			return 1<<63 - 1
		}
		return c.end - c.start
	}
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if da, db := dur(a), dur(b); da != db {
			return da > db
		}
		if (a.span == nil) != (b.span == nil) {
			return a.span == nil
		}
		return a.id < b.id
	})
	return cands
}

// bars builds the kept candidates' bars.
func (ls *lives) bars(cands []barCand, st *stackTable) []Bar {
	bars := make([]Bar, 0, len(cands))
	for _, c := range cands {
		var bar Bar
		if s := c.span; s != nil {
			bar = Bar{ID: fmt.Sprintf("%s%d", s.kind, s.id), Kind: s.kind, Name: s.name, Goid: s.goid, Start: tsTime(c.start), Parent: s.parent}
		} else {
			l := ls.byGoid[c.id]
			bar = Bar{ID: fmt.Sprintf("g%d", c.id), Kind: "goroutine", Name: l.name, Goid: c.id, Start: tsTime(c.start), State: l.state, Parent: l.parent, EndUnknown: l.endUnknown}
			if l.name == "" && l.creation != 0 {
				if fr := st.framesOf(l.creation); len(fr) > 0 {
					bar.CreatedIn = creatorOfCreationStack(fr)
				}
			}
		}
		if c.end != 0 {
			e := tsTime(c.end)
			bar.End = &e
		}
		bars = append(bars, bar)
	}
	return bars
}

// dumpsTruncated reports whether a dump the analysis uses was cut short
// (a dump at the runtime's 64 MiB cap does not list every goroutine). Cut
// dumps beside whole ones are left out (see cutDumps), so it is only when
// every dump was cut.
func dumpsTruncated(m bundle.Manifest) bool {
	if len(cutDumps(m)) > 0 {
		return false
	}
	for _, a := range m.Artifacts {
		if a.Kind == bundle.SourceDump && a.Status == bundle.StatusTruncated {
			return true
		}
	}
	return false
}

// Members counts how many of a suspect's selected goroutines are alive at
// the view's AliveAt.
func (v *LifetimeView) Members(sel Selection) LifetimeMembers {
	out := LifetimeMembers{ID: sel.ID, AliveAt: v.AliveAt}
	for _, g := range sel.Goids {
		if v.alive[g] {
			out.Alive++
		}
	}
	return out
}
