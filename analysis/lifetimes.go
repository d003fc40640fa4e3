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
	goroutines := map[int64]*life{}
	// Dumps give presence between snapshots: from the first snapshot that
	// shows it to the first one that no longer does.
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
	inDumps := map[int64]bool{}
	for goid, g := range d.goroutine {
		inDumps[goid] = true
		e, ok := entries[g.stackID]
		if !ok {
			e = entryFunction(st.framesOf(g.stackID))
			entries[g.stackID] = e
		}
		goroutines[goid] = &life{start: g.firstTS, end: next[g.lastTS], parent: g.creator, name: e, state: stateOf[g.stackID]}
	}
	d.goroutine = nil
	for goid, g := range tg {
		l := goroutines[goid]
		if l == nil {
			l = &life{}
			goroutines[goid] = l
		}
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
	for goid, g := range eg {
		l := goroutines[goid]
		if l == nil {
			l = &life{}
			goroutines[goid] = l
		}
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
		if g.lost != 0 && !inDumps[goid] {
			l.lost = g.lost
		}
	}
	// Alive means alive at the last dump when there are dumps: a dump
	// lists every goroutine, so one the traces or eBPF saw but no later
	// dump lists had ended by the next dump after its last sighting.
	var aliveAt int64
	if n := len(d.snapshots); n > 0 && !dumpsTruncated(b.Manifest) {
		aliveAt = d.snapshots[n-1]
		for goid, l := range goroutines {
			if l.end != 0 || inDumps[goid] {
				continue
			}
			if i := sort.Search(n, func(i int) bool { return d.snapshots[i] > l.start }); i < n {
				l.end = d.snapshots[i]
			}
		}
	}
	alive := map[int64]bool{}
	for goid, l := range goroutines {
		// One seen only by eBPF probes detached after its creation is
		// last known alive when they were.
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
	lo, hi := from.UnixNano(), to.UnixNano()
	if from.IsZero() {
		lo = b.Manifest.Start.UnixNano()
		if b.Manifest.Start.IsZero() {
			lo = 0
		}
	}
	if to.IsZero() {
		hi = 1<<63 - 1
		if !b.Manifest.End.IsZero() {
			hi = b.Manifest.End.UnixNano()
		}
	}
	in := func(start, end int64) bool { return (start == 0 || start <= hi) && (end == 0 || end >= lo) }
	// Rank lightweight candidates first and build bars only for the kept
	// ones: open-ended first (they are what a leak looks like), then
	// longer before shorter; kind and id break ties so the order is stable.
	type cand struct {
		start, end, id int64
		span           *spanRec
	}
	var cands []cand
	for goid, l := range goroutines {
		if in(l.start, l.end) {
			cands = append(cands, cand{start: max(l.start, lo), end: l.end, id: goid})
		}
	}
	for _, s := range spans {
		if in(s.start, s.end) {
			cands = append(cands, cand{start: max(s.start, lo), end: s.end, id: s.id, span: s})
		}
	}
	dur := func(c cand) int64 {
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
	total := len(cands)
	if len(cands) > limit {
		cands = cands[:limit]
	}
	bars := make([]Bar, 0, len(cands))
	for _, c := range cands {
		var bar Bar
		if s := c.span; s != nil {
			bar = Bar{ID: fmt.Sprintf("%s%d", s.kind, s.id), Kind: s.kind, Name: s.name, Goid: s.goid, Start: tsTime(c.start), Parent: s.parent}
		} else {
			l := goroutines[c.id]
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
