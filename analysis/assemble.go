package analysis

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/leakscope/leakscope/analysis/internal/tables"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/internal/format"
)

// assemble lays the verdicts out as a report: suspects with their ids,
// the heap section, the leak-profile cross-check, spans, series, the
// bundle summary and the timeline. It decides nothing.
func assemble(in *loaded, v *verdicts, cfg config) *Report {
	rep := &Report{Suspects: []Suspect{}, Timeline: []TimelineEvent{}, Warnings: in.warnings,
		Series: Series{Suspects: map[string][]Point{}}}
	var sus []*Suspect
	byCandidate := map[*candidate]*Suspect{}
	for _, x := range v.goroutines {
		gs := goroutineSuspect(in, x, attribute(in, x.s), cfg.maxGoids)
		byCandidate[x] = gs
		sus = append(sus, gs)
	}
	heapBySite := map[*heapSite]*Suspect{}
	for _, h := range v.heap {
		hs := heapSuspect(in, h, cfg.rules)
		heapBySite[h] = hs
		sus = append(sus, hs)
	}
	sort.SliceStable(sus, func(i, j int) bool { return sus[i].Score > sus[j].Score })
	numberSuspects(rep, sus, v.all, heapBySite, in.src)
	rep.Incidents = incidents(rep.Suspects, cfg.rules, newReleaseFinder(in))
	for _, x := range v.lookAlikes {
		e := lookAlike(x)
		rep.LookAlikes = append(rep.LookAlikes, LookAlike{Location: x.s.loc.Function, State: x.s.state,
			Count: int64(lastCount(x.s)), Kind: e.Kind, Reason: e.Detail})
	}
	rep.Inputs = in.inputs
	rep.Heap = heapSection(in, v, byCandidate, heapBySite)
	if len(v.heap) == 0 && v.sight != nil && rep.Inputs != nil {
		rep.Inputs.Next = append(rep.Inputs.Next, "a longer capture, or a finer heap sampling rate, for heap growth: "+v.sight.Text)
	}
	if in.leaks != nil {
		rep.LeakProfile = crossCheck(rep.Suspects, in.leaks, in.leakTotal, in.prof.LeakTS)
	}
	rep.Spans = summariseSpans(in.spans, in.ix, in.tg)
	linkOutliving(rep)
	rep.Series.Goroutines = goroutineSeries(in)
	rep.Series.HeapInuse = heapTotals(in.prof)
	rep.Series.HeapLive, rep.Series.HeapLiveFrom = in.metrics["heap_live_bytes"], "trace"
	if len(rep.Series.HeapLive) == 0 {
		rep.Series.HeapLive, rep.Series.HeapLiveFrom = rep.Series.HeapInuse, "heap_profiles"
	}
	if len(rep.Series.HeapLive) == 0 {
		rep.Series.HeapLiveFrom = ""
	}
	rep.Series.GC, rep.Series.GCFrom = in.metrics["gc_cycle"], "trace"
	if gc := in.metrics[ebpfGC]; len(gc) > 0 {
		rep.Series.GC, rep.Series.GCFrom = gc, "ebpf"
	}
	if len(rep.Series.GC) == 0 {
		rep.Series.GCFrom = ""
	}
	rep.Series.Windows = in.metricWindows
	nonNil(&rep.Series)
	rep.Bundle = summarise(in.b, in.d, in.prof)
	// The peak is of the series the report charts (dumps, else goroutine
	// profiles, else the trace's metric), so a bundle without dumps has
	// one too.
	for _, p := range rep.Series.Goroutines {
		rep.Bundle.PeakGoroutines = max(rep.Bundle.PeakGoroutines, int64(p.Value))
	}
	rep.GeneratedAt = cfg.now
	rep.Timeline = timeline(rep, in.b)
	rep.Races = in.races
	return rep
}

// numberSuspects gives suspects their ids (G1, G2, … and H1, …) in rank
// order, links heap suspects that hold one another, and adds them and
// their series to the report.
func numberSuspects(rep *Report, sus []*Suspect, sites []*heapSite, bySite map[*heapSite]*Suspect, src *sourceCode) {
	ng, nh := 0, 0
	for _, s := range sus {
		if s.Kind == KindGoroutine {
			ng++
			s.ID = fmt.Sprintf("G%d", ng)
		} else {
			nh++
			s.ID = fmt.Sprintf("H%d", nh)
		}
	}
	linkHeapObjects(sus, sites, bySite, src)
	rep.Suspects = slices.Grow(rep.Suspects, len(sus))
	for _, s := range sus {
		s.Display = display(s)
		rep.Series.Suspects[s.ID] = s.Counts
		rep.Suspects = append(rep.Suspects, *s)
	}
}

// heapSection is the report's heap part: snapshots, top growers (one row
// per allocating line and suspect, with the figures the suspects show),
// total and attributed growth, first-to-last diff.
func heapSection(in *loaded, v *verdicts, byCandidate map[*candidate]*Suspect, heapBySite map[*heapSite]*Suspect) HeapGrowth {
	var hg HeapGrowth
	prof := in.prof
	for _, t := range prof.HeapTS {
		hg.Snapshots = append(hg.Snapshots, tsTime(t))
	}
	hg.Growers = []HeapGrower{}
	for _, h := range v.sites {
		g := h.grower
		if s := byCandidate[h.owner]; s != nil {
			g.Suspect, g.Pattern = s.ID, s.Pattern
			hg.AttributedBytes += int64(h.rise)
		}
		if s := heapBySite[h]; s != nil {
			g.HeapSuspect, g.Pattern = s.ID, s.Pattern
		}
		if len(hg.Growers) < maxGrowers {
			hg.Growers = append(hg.Growers, g)
		}
	}
	tot := heapTotals(prof)
	if len(tot) >= 2 {
		hg.GrowthBytes = int64(tot[len(tot)-1].Value - tot[0].Value)
		hg.Diff, hg.OwnDeltaBytes = diffHeap(prof, in.st, prof.HeapTS[0], prof.HeapTS[len(prof.HeapTS)-1], 20)
	}
	hg.Sight = v.sight
	return hg
}

// linkOutliving names the suspect each outliving span group belongs to.
func linkOutliving(rep *Report) {
	for i, o := range rep.Spans.Outliving {
		for _, s := range rep.Suspects {
			if s.Kind == KindGoroutine && s.Span == o.Span && o.Function != "" && containsFn(s.Stack, o.Function) {
				rep.Spans.Outliving[i].Suspect = s.ID
			}
		}
	}
}

// goroutineSeries is the goroutine count over time. The snapshots (dumps
// or goroutine profiles) count exactly the goroutines the suspects are
// counted from, over the whole capture; trace windows only cover part of
// it and add the runtime's own goroutines, so the metric serves only when
// there are fewer than two snapshots.
func goroutineSeries(in *loaded) []Point {
	d, prof := in.d, in.prof
	if len(d.snapshots) < 2 && len(prof.GorTS) < 2 {
		if m := in.metrics["goroutines"]; len(m) > 0 {
			return m
		}
	}
	totals, times := d.totals, d.snapshots
	if d.rows == 0 {
		totals = map[int64]int64{}
		for _, m := range prof.Goroutine {
			for t, v := range m {
				totals[t] += v[0]
			}
		}
		times = prof.GorTS
	}
	out := historyTotals(in)
	for _, t := range times {
		out = append(out, Point{TS: tsTime(t), Value: float64(totals[t])})
	}
	return out
}

func nonNil(s *Series) {
	for _, p := range []*[]Point{&s.Goroutines, &s.HeapLive, &s.HeapInuse, &s.GC} {
		if *p == nil {
			*p = []Point{}
		}
	}
	if s.Windows == nil {
		s.Windows = []Window{}
	}
}

// crossCheck compares suspects with the runtime's goroutineleak profile.
func crossCheck(sus []Suspect, leaks map[Frame]int64, total int64, snaps []int64) *LeakProfileCheck {
	c := &LeakProfileCheck{Snapshots: len(snaps), Leaked: total, Agree: []string{}, OnlyAnalysis: []string{}, OnlyProfile: []string{}}
	if len(snaps) > 0 {
		c.LeakedAt = tsTime(snaps[len(snaps)-1])
	}
	covered := map[Frame]bool{}
	for _, s := range sus {
		if s.Kind != KindGoroutine {
			continue
		}
		k := Frame{Function: s.Location, Line: s.Line}
		if leaks[k] > 0 {
			covered[k] = true
			c.Agree = append(c.Agree, s.ID)
		} else {
			c.OnlyAnalysis = append(c.OnlyAnalysis, s.ID)
		}
	}
	for k, n := range leaks {
		if !covered[k] {
			c.OnlyProfile = append(c.OnlyProfile, fmt.Sprintf("%s:%d (%d goroutines)", k.Function, k.Line, n))
		}
	}
	sort.Strings(c.OnlyProfile)
	return c
}

// summarise fills the bundle summary.
func summarise(b *bundle.Bundle, d *dumpData, p *tables.ProfileData) BundleSummary {
	m := b.Manifest
	s := BundleSummary{CaptureID: m.CaptureID, Node: m.Node, PID: m.Target.PID, URL: m.Target.URL, Exe: m.Target.Exe,
		GoVersion: m.Target.GoVersion, Module: m.Target.ModulePath, Start: m.Start, End: m.End, Sources: []string{},
		GoroutineSnapshots: len(d.snapshots), HeapSnapshots: len(p.HeapTS), GoroutineRows: d.rows,
		Service: m.Target.Service(), Build: m.Target.Build(), Trigger: m.Trigger, TriggerText: TriggerText(m.Trigger)}
	for _, src := range m.Sources {
		t := src.Kind + " (" + src.Status
		if src.Detail != "" {
			t += ": " + src.Detail
		}
		s.Sources = append(s.Sources, t+")")
	}
	for _, n := range d.totals {
		s.PeakGoroutines = max(s.PeakGoroutines, n)
	}
	if s.Start.IsZero() && len(d.snapshots) > 0 {
		s.Start, s.End = tsTime(d.snapshots[0]), tsTime(d.snapshots[len(d.snapshots)-1])
	}
	return s
}

const maxMissingListed = 10

// sourceCoverage sums up, over the goroutine sites, which functions the
// kept source could be read for, and what that cost: the undecided waits
// of the wait-for graph and the reported suspects without their
// statement. It adds a warning when anything was missing.
func sourceCoverage(in *loaded, w *waitGraph, rep *Report) *SourceCoverage {
	c := &SourceCoverage{}
	why := map[[2]string]string{}
	for _, s := range in.sites {
		f := s.loc
		if f.File == "" || isStd(f) {
			continue
		}
		k := [2]string{f.File, f.Function}
		p, reason := in.src.funcAt(f)
		if old, seen := why[k]; seen && (old == "" || p == nil) {
			continue
		}
		why[k] = reason
	}
	for k, reason := range why {
		c.Functions++
		if reason == "" {
			c.Kept++
			continue
		}
		c.MissingCount++
		c.Missing = append(c.Missing, MissingSource{Function: k[1], File: k[0], Why: reason})
	}
	sort.Slice(c.Missing, func(i, j int) bool {
		if c.Missing[i].Function != c.Missing[j].Function {
			return c.Missing[i].Function < c.Missing[j].Function
		}
		return c.Missing[i].File < c.Missing[j].File
	})
	c.Missing = c.Missing[:min(len(c.Missing), maxMissingListed)]
	groups := map[*site]int{}
	for _, x := range w.gs {
		if x.undecided && x.site != nil {
			groups[x.site]++
			c.UndecidedGoroutines++
		}
	}
	c.UndecidedGroups = len(groups)
	for _, s := range rep.Suspects {
		if s.Location != "" && !isStd(Frame{Function: s.Location, File: s.File}) && (s.Source == nil || s.Source.Status != SourceOK) {
			c.SuspectsWithoutSource++
		}
	}
	if c.MissingCount > 0 || c.UndecidedGroups > 0 {
		rep.Warnings = append(rep.Warnings, c.warning())
	}
	rep.LookAlikes = append(rep.LookAlikes, undecidedLookAlikes(in, groups)...)
	return c
}

// warning says what was missing and what it cost.
func (c *SourceCoverage) warning() string {
	var names []string
	for _, m := range c.Missing {
		names = append(names, fmt.Sprintf("%s in %s: %s", m.Function, m.File, m.Why))
	}
	if more := c.MissingCount - len(c.Missing); more > 0 {
		names = append(names, fmt.Sprintf("and %d more", more))
	}
	part := "found only in part"
	if c.Kept == 0 {
		part = "missing"
	}
	w := fmt.Sprintf("source %s: %d of %d functions the goroutines wait in have no readable statement at their line (%s)",
		part, c.MissingCount, c.Functions, strings.Join(names, "; "))
	if c.UndecidedGroups > 0 {
		w += fmt.Sprintf("; cost: %s (%s) in a select or receive taken as able to run, since without the statement a timer case cannot be ruled out: no stuck verdict for them, and they count as goroutines that may wake others",
			format.Count(float64(c.UndecidedGroups), "parked group"), format.Count(float64(c.UndecidedGoroutines), "goroutine"))
	}
	if c.SuspectsWithoutSource > 0 {
		w += fmt.Sprintf("; %s named from frames alone (no ticker or stopped timer pattern)", format.Count(float64(c.SuspectsWithoutSource), "suspect"))
	}
	return w + ". Give the checkout or module cache (leakscope report --source-root DIR, or ingest --source-root DIR) to judge them."
}

// undecidedLookAlikes lists the undecided groups with what their source
// would add, most goroutines first.
func undecidedLookAlikes(in *loaded, groups map[*site]int) []LookAlike {
	var out []LookAlike
	for s, n := range groups {
		_, why := in.src.funcAt(s.loc)
		if why == "" {
			why = "the C of a value whose type the declaration does not show"
		}
		what := "this select"
		if waitKind(s.state, s.frames) == "chan receive" {
			what = "this receive"
		}
		out = append(out, LookAlike{Location: s.loc.Function, State: s.state, Count: int64(n), Kind: "source-absent",
			Reason: fmt.Sprintf("%s: cannot rule out a timer case in %s (%s:%d); its statement in the source would tell whether a timer ends it", why, what, s.loc.File, s.loc.Line)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Location < out[j].Location
	})
	return out[:min(len(out), maxLookAlikes)]
}
