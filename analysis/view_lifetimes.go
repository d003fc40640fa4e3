package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis/internal/tables"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
	"github.com/leakscope/leakscope/internal/format"
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
	tg, err := tables.ReadTraceGoroutines(b, mem)
	if err != nil {
		return nil, err
	}
	eg, err := tables.ReadEBPFGoroutines(b, mem)
	if err != nil {
		return nil, err
	}
	spans, err := tables.ReadSpans(b, mem)
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
func (ls *lives) addTrace(tg map[int64]*tables.TraceG) {
	for goid, g := range tg {
		l := ls.get(goid)
		if g.Created != 0 && (l.start == 0 || g.Created < l.start) {
			l.start = g.Created
		}
		if g.Ended != 0 {
			l.end = g.Ended
		}
		if l.name == "" {
			l.name = g.StartFn
		}
		if l.parent == 0 {
			l.parent = g.Parent
		}
		if g.Ended == 0 && g.LastReason != "" {
			l.state = g.LastReason
		}
		if l.creation == 0 {
			l.creation = g.CreationStack
		}
	}
}

// addEBPF merges what the eBPF probes saw of each goroutine.
func (ls *lives) addEBPF(eg map[int64]*tables.EBPFG) {
	for goid, g := range eg {
		l := ls.get(goid)
		if g.Created != 0 && (l.start == 0 || g.Created < l.start) {
			l.start = g.Created
		}
		if g.Ended != 0 && l.end == 0 {
			l.end = g.Ended
		}
		if l.parent == 0 {
			l.parent = g.Parent
		}
		if l.creation == 0 {
			l.creation = g.Stack
		}
		if g.Lost != 0 && !ls.inDumps[goid] {
			l.lost = g.Lost
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
	span           *tables.SpanRec
}

// rankBars lists the goroutines and spans inside [lo, hi], ranked
// before any bar is built: open-ended first (they are what a leak looks
// like), then longer before shorter; kind and id break ties so the
// order is stable.
func rankBars(ls *lives, spans []*tables.SpanRec, lo, hi int64) []barCand {
	in := func(start, end int64) bool { return (start == 0 || start <= hi) && (end == 0 || end >= lo) }
	var cands []barCand
	for goid, l := range ls.byGoid {
		if in(l.start, l.end) {
			cands = append(cands, barCand{start: max(l.start, lo), end: l.end, id: goid})
		}
	}
	for _, s := range spans {
		if in(s.Start, s.End) {
			cands = append(cands, barCand{start: max(s.Start, lo), end: s.End, id: s.ID, span: s})
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
			bar = Bar{ID: fmt.Sprintf("%s%d", s.Kind, s.ID), Kind: s.Kind, Name: s.Name, Goid: s.Goid, Start: tsTime(c.start), Parent: s.Parent}
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

// TransitionSource returns the state changes of the goroutines goids in a
// bundle's execution traces between from and to (wall-clock Unix
// nanoseconds, 0 leaving that end open), sorted by goroutine, then time:
// what a per-goroutine state view (running, runnable, waiting with the
// reason, syscall; the stack of each change) is drawn from.
//
// ingest.Transitions is the implementation (ingest/gotrace.TransitionsFrom,
// with the decompressor for raw traces kept compressed): it decodes them
// on demand from the raw traces, since ingest does not store them.
// Analysis and the web server never import the parsers, so the command
// wires it in (web.Options.Transitions); a view of a suspect asks for its
// member goids and their creators ([AncestryTree.Chain]).
type TransitionSource func(b *bundle.Bundle, goids []int64, from, to int64) ([]schema.Transition, error)

// Verdicts of a goroutine bar of a timeline ([Bar.Verdict]).
const (
	VerdictSuspect = "suspect" // a member of a leak suspect
	VerdictHealthy = "healthy" // alive at the end, in no suspect
	VerdictEnded   = "ended"   // ended within the capture
)

// groupBars sets each bar's Group and returns the groups: spans first
// (tasks, regions), then goroutine groups, each by count, largest first,
// then by label.
func groupBars(bars []Bar) []LifetimeGroup {
	type key struct{ kind, name, createdIn string }
	idx := map[key]int{}
	var groups []LifetimeGroup
	for i := range bars {
		b := &bars[i]
		k := key{b.Kind, b.Name, ""}
		if b.Name == "" {
			k.createdIn = b.CreatedIn
		}
		g, ok := idx[k]
		if !ok {
			g = len(groups)
			idx[k] = g
			groups = append(groups, LifetimeGroup{Kind: k.kind, Name: k.name, CreatedIn: k.createdIn, Label: groupLabel(k.kind, k.name, k.createdIn), Suspects: []string{}})
		}
		b.Group = g
		groups[g].Count++
		if b.End == nil {
			groups[g].Alive++
		}
	}
	order := map[string]int{"task": 0, "region": 1, "goroutine": 2}
	perm := make([]int, len(groups))
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int {
		x, y := groups[a], groups[b]
		if c := cmp.Compare(order[x.Kind], order[y.Kind]); c != 0 {
			return c
		}
		if c := cmp.Compare(y.Count, x.Count); c != 0 {
			return c
		}
		return cmp.Compare(x.Label, y.Label)
	})
	newIdx := make([]int, len(groups))
	sorted := make([]LifetimeGroup, len(groups))
	for n, old := range perm {
		newIdx[old] = n
		sorted[n] = groups[old]
	}
	for i := range bars {
		bars[i].Group = newIdx[bars[i].Group]
	}
	return sorted
}

// groupLabel names a group for people.
func groupLabel(kind, name, createdIn string) string {
	switch {
	case name != "":
		return name
	case kind != "goroutine":
		return "unnamed " + kind
	case createdIn != "":
		return "entry unknown · created in " + createdIn
	}
	return "entry unknown (seen without a stack)"
}

// MarkVerdicts gives every goroutine bar its verdict — a member of a
// suspect (members maps suspect ids to their member goids), else alive
// at the end (healthy) or ended — and counts the members per group.
func (v *LifetimeView) MarkVerdicts(members map[string][]int64) {
	of := map[int64]string{}
	ids := make([]string, 0, len(members))
	for id := range members {
		ids = append(ids, id)
	}
	slices.Sort(ids) // a goroutine in two suspects takes the first id
	for _, id := range slices.Backward(ids) {
		for _, g := range members[id] {
			of[g] = id
		}
	}
	for i := range v.Groups {
		v.Groups[i].Members, v.Groups[i].Suspects, v.Groups[i].AliveAtDump = 0, []string{}, nil
		if !v.AliveAt.IsZero() && v.Groups[i].Kind == "goroutine" {
			v.Groups[i].AliveAtDump = new(int)
		}
	}
	for i := range v.Bars {
		b := &v.Bars[i]
		if b.Kind != "goroutine" {
			continue
		}
		if b.Group < len(v.Groups) && v.Groups[b.Group].AliveAtDump != nil && v.alive[b.Goid] {
			*v.Groups[b.Group].AliveAtDump++
		}
		switch id := of[b.Goid]; {
		case id != "":
			b.Verdict, b.Suspect = VerdictSuspect, id
			if b.Group < len(v.Groups) {
				g := &v.Groups[b.Group]
				g.Members++
				if !slices.Contains(g.Suspects, id) {
					g.Suspects = append(g.Suspects, id)
				}
			}
		case b.End == nil:
			b.Verdict = VerdictHealthy
		default:
			b.Verdict = VerdictEnded
		}
	}
	for i := range v.Groups {
		g := &v.Groups[i]
		slices.Sort(g.Suspects)
		g.Summary = groupSummary(*g)
	}
}

// groupSummary words a group's counts.
func groupSummary(g LifetimeGroup) string {
	if g.Kind != "goroutine" {
		s := format.Count(float64(g.Count), g.Kind)
		if g.Alive > 0 {
			s += ", " + format.Int(int64(g.Alive)) + " open"
		}
		return s
	}
	s := format.Count(float64(g.Count), "goroutine") + ", " + format.Int(int64(g.Alive)) + " alive"
	if n := g.AliveAtDump; n != nil && *n != g.Alive {
		// Some began after the last dump (or it lists goroutines the
		// view's traces saw end): say both, as the toolbar counts at it.
		s = format.Count(float64(g.Count), "goroutine") + ", " + format.Int(int64(g.Alive)) + " alive at the end (" + format.Int(int64(*n)) + " at the last dump)"
	}
	if g.Members > 0 {
		s += ", " + format.Int(int64(g.Members)) + " in " + strings.Join(g.Suspects, ", ")
	}
	return s
}

// String is a group's label with its count, for logs and tests.
func (g LifetimeGroup) String() string { return fmt.Sprintf("%s (%d)", g.Label, g.Count) }
