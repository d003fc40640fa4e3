package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// scored is a site with its rule and verdict.
type scored struct {
	s        *site
	rule     *Rule
	sc       siteScore
	retained int64
	growers  []*heapSite
	leakHit  bool
	trace    *traceGroup
	source   string
}

func analyze(b *bundle.Bundle, mem memory.Allocator, opts Options) (*Report, error) {
	rules := opts.Rules
	if rules == nil {
		var err error
		if rules, err = LoadRules(""); err != nil {
			return nil, err
		}
	}
	minScore := opts.MinScore
	if minScore == 0 {
		minScore = DefaultMinScore
	}
	maxGoids := opts.MaxGoids
	if maxGoids <= 0 {
		maxGoids = 20
	}
	rep := &Report{Suspects: []Suspect{}, Timeline: []TimelineEvent{}, Warnings: []string{},
		Series: Series{Suspects: map[string][]Point{}}}
	st, err := loadStacks(b, mem)
	if err != nil {
		return nil, err
	}
	d, err := readDumps(b, mem, false)
	if err != nil {
		return nil, err
	}
	if d.partial != nil {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("goroutines table truncated: %v", d.partial))
	}
	prof, err := readSamples(b, mem)
	if err != nil {
		return nil, err
	}
	metrics, err := readMetrics(b, mem)
	if err != nil {
		return nil, err
	}
	pop, tg, err := loadPopulation(b, mem, st, d)
	if err != nil {
		return nil, err
	}
	spans, err := readSpans(b, mem)
	if err != nil {
		return nil, err
	}
	end := b.Manifest.End.UnixNano()
	ix := newSpanIndex(spans, end)
	tgroups := traceGroups(tg, st)

	// Goroutine sites, from the richest source available.
	var sites []*site
	var ts []int64
	switch {
	case d.rows > 0:
		sites, ts = buildSites(d, st), d.snapshots
	case len(prof.gorTS) > 0:
		sites, ts = sitesFromProfile(prof, st), prof.gorTS
		rep.Warnings = append(rep.Warnings, "no goroutine dumps: groups come from goroutine profile counts, without wait times or creators")
	case len(tgroups) > 0:
		sites, ts = sitesFromTrace(tgroups, st)
		rep.Warnings = append(rep.Warnings, "no goroutine dumps or profiles: groups come from goroutines alive at the end of the trace")
	}
	if len(ts) == 1 {
		rep.Warnings = append(rep.Warnings, "only one goroutine snapshot: growth cannot be measured, only long waits and the runtime's leak marks")
	}
	leaks, leakTotal := leakSites(prof, st)
	src := sourceCache{}
	var all []*scored
	for _, s := range sites {
		x := &scored{s: s}
		_, locIdx := locationFrame(s.frames)
		x.source = src.context(s.frames, locIdx)
		x.rule = classify(rules, KindGoroutine, s.state, functions(s.frames), x.source)
		if leaks != nil {
			x.leakHit = leaks[Frame{Function: s.loc.Function, Line: s.loc.Line}] > 0
		}
		if t := tgroups[traceKey{s.creator, s.entry}]; t != nil && s.creator != "" {
			x.trace = t
		}
		x.sc = scoreSite(s, ts, x.rule, 0, x.leakHit, x.trace)
		all = append(all, x)
	}

	// Heap trends, attributed to goroutine groups that allocated them.
	growers := heapTrends(prof, st)
	attributed := map[*heapSite]*scored{}
	for _, h := range growers {
		for _, x := range all {
			if x.sc.conf == 0 || x.sc.score < math.Max(minScore, 1)/2 || !allocatedBy(h.funcs, x.s) {
				continue
			}
			if cur := attributed[h]; cur == nil || x.sc.score > cur.sc.score {
				attributed[h] = x
			}
		}
	}
	// Goroutine structures allocated by the runtime alone (runtime.malg
	// under newproc1 on the system stack) belong to whichever group keeps
	// adding goroutines fastest.
	var fastest *scored
	for _, x := range all {
		if x.sc.conf > 0 && x.sc.score >= math.Max(minScore, 1)/2 && (fastest == nil || x.sc.fit.Slope > fastest.sc.fit.Slope) {
			fastest = x
		}
	}
	for _, h := range growers {
		if attributed[h] == nil && fastest != nil && runtimeOnly(h.funcs) && goroutineCreation(h.funcs) {
			attributed[h] = fastest
		}
	}
	for h, x := range attributed {
		x.growers = append(x.growers, h)
		x.retained += h.grower.InuseBytes
	}
	for _, x := range all {
		if x.retained > 0 {
			x.sc = scoreSite(x.s, ts, x.rule, x.retained, x.leakHit, x.trace)
		}
	}
	// A group that does not make the cut explains no heap growth.
	for h, x := range attributed {
		if x.sc.score < minScore || x.sc.score == 0 {
			delete(attributed, h)
			x.growers = nil
		}
	}

	// Goroutine suspects.
	sort.Slice(all, func(i, j int) bool {
		if all[i].sc.score != all[j].sc.score {
			return all[i].sc.score > all[j].sc.score
		}
		return all[i].s.loc.Function < all[j].s.loc.Function
	})
	var sus []*Suspect
	for _, x := range all {
		if x.sc.score < minScore || x.sc.score == 0 {
			continue
		}
		sus = append(sus, goroutineSuspect(x, ts, pop, ix, tg, st, maxGoids, src))
	}
	// Heap suspects: growers no goroutine group explains, one per
	// allocating line (call paths to the same line are merged).
	byLine := map[string]*Suspect{}
	for _, h := range growers {
		if attributed[h] != nil || h.score < minScore || h.score == 0 || runtimeOnly(h.funcs) {
			continue
		}
		hs := heapSuspect(h, rules, src)
		key := fmt.Sprintf("%s\x00%s:%d", hs.Location, hs.File, hs.Line)
		if first := byLine[key]; first != nil {
			mergeHeapSuspect(first, hs)
			continue
		}
		byLine[key] = hs
		sus = append(sus, hs)
	}
	sort.SliceStable(sus, func(i, j int) bool { return sus[i].Score > sus[j].Score })
	ng, nh := 0, 0
	for _, s := range sus {
		if s.Kind == KindGoroutine {
			ng++
			s.ID = fmt.Sprintf("G%d", ng)
		} else {
			nh++
			s.ID = fmt.Sprintf("H%d", nh)
		}
		rep.Series.Suspects[s.ID] = s.Counts
		rep.Suspects = append(rep.Suspects, *s)
	}
	for _, h := range growers {
		if x := attributed[h]; x != nil {
			for _, s := range rep.Suspects {
				if s.Kind == KindGoroutine && s.StackID == x.s.stackID && s.Location == x.s.loc.Function {
					h.grower.Suspect = s.ID
					h.grower.Pattern = s.Pattern
				}
			}
		}
	}

	// Heap section.
	for _, t := range prof.heapTS {
		rep.Heap.Snapshots = append(rep.Heap.Snapshots, tsTime(t))
	}
	rep.Heap.Growers = []HeapGrower{}
	for i, h := range growers {
		if i >= maxGrowers {
			break
		}
		rep.Heap.Growers = append(rep.Heap.Growers, h.grower)
	}
	tot := heapTotals(prof)
	if len(tot) >= 2 {
		rep.Heap.GrowthBytes = int64(tot[len(tot)-1].Value - tot[0].Value)
		for h := range attributed {
			rep.Heap.AttributedBytes += int64(h.delta)
		}
		rep.Heap.Diff = diffHeap(prof, st, prof.heapTS[0], prof.heapTS[len(prof.heapTS)-1], 20)
	}

	// Leak profile cross-check.
	if leaks != nil {
		rep.LeakProfile = crossCheck(rep.Suspects, leaks, leakTotal, len(prof.leakTS))
	}

	rep.Spans = summariseSpans(spans, ix, tg)
	for i, o := range rep.Spans.Outliving {
		for _, s := range rep.Suspects {
			if s.Kind == KindGoroutine && s.Span == o.Span && o.Function != "" && containsFn(s.Stack, o.Function) {
				rep.Spans.Outliving[i].Suspect = s.ID
			}
		}
	}

	// Series.
	// Goroutines over time: the snapshots (dumps or goroutine profiles)
	// count exactly the goroutines the suspects are counted from, over the
	// whole capture; trace windows only cover part of it and add the
	// runtime's own goroutines, so they serve only when there are fewer
	// than two snapshots.
	if len(d.snapshots) < 2 && len(prof.gorTS) < 2 {
		rep.Series.Goroutines = metrics["goroutines"]
	}
	if len(rep.Series.Goroutines) == 0 {
		totals := d.totals
		times := d.snapshots
		if d.rows == 0 {
			totals = map[int64]int64{}
			for _, m := range prof.goroutine {
				for t, v := range m {
					totals[t] += v[0]
				}
			}
			times = prof.gorTS
		}
		for _, t := range times {
			rep.Series.Goroutines = append(rep.Series.Goroutines, Point{TS: tsTime(t), Value: float64(totals[t])})
		}
	}
	rep.Series.HeapInuse = tot
	rep.Series.HeapLive = metrics["heap_live_bytes"]
	if len(rep.Series.HeapLive) == 0 {
		rep.Series.HeapLive = tot
	}
	rep.Series.GC = metrics["gc_cycle"]
	nonNil(&rep.Series)

	rep.Bundle = summarise(b, d, prof)
	rep.GeneratedAt = opts.Now
	rep.Timeline = timeline(rep, b)
	return rep, nil
}

func nonNil(s *Series) {
	for _, p := range []*[]Point{&s.Goroutines, &s.HeapLive, &s.HeapInuse, &s.GC} {
		if *p == nil {
			*p = []Point{}
		}
	}
}

// allocatedBy reports whether an allocation stack belongs to a goroutine
// group: it runs through the group's own location or entry function, or
// its first frame outside the standard library is the creator, or it is the
// group's goroutines being created (g structures allocated under
// runtime.newproc1 from the creator).
func allocatedBy(allocFuncs []string, s *site) bool {
	first := true
	for _, fn := range allocFuncs {
		if isStdlib(fn) {
			continue
		}
		// The group's own code, or its creator itself (not a callee)
		// setting up what the new goroutines hold: channels, buffers,
		// closures.
		if fn == s.loc.Function || fn == s.entry || first && fn == s.creator {
			return true
		}
		first = false
	}
	hasNewproc := false
	for _, fn := range allocFuncs {
		if fn == "runtime.newproc1" || fn == "runtime.malg" {
			hasNewproc = true
		}
		if hasNewproc && fn == s.creator && s.creator != "" {
			return true
		}
	}
	return false
}

// runtimeOnly reports whether every frame is in the runtime: nothing a
// user can act on.
func runtimeOnly(funcs []string) bool {
	for _, fn := range funcs {
		if !strings.HasPrefix(fn, "runtime.") && !strings.HasPrefix(fn, "internal/runtime/") {
			return false
		}
	}
	return true
}

// goroutineCreation reports whether an allocation stack is the runtime
// making a new goroutine.
func goroutineCreation(funcs []string) bool {
	for _, fn := range funcs {
		if fn == "runtime.malg" || fn == "runtime.newproc1" {
			return true
		}
	}
	return false
}

func containsFn(frames []Frame, fn string) bool {
	for _, f := range frames {
		if f.Function == fn {
			return true
		}
	}
	return false
}

// crossCheck compares suspects with the runtime's goroutineleak profile.
func crossCheck(sus []Suspect, leaks map[Frame]int64, total int64, snaps int) *LeakProfileCheck {
	c := &LeakProfileCheck{Snapshots: snaps, Leaked: total, Agree: []string{}, OnlyAnalysis: []string{}, OnlyProfile: []string{}}
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
func summarise(b *bundle.Bundle, d *dumpData, p *profileData) BundleSummary {
	m := b.Manifest
	s := BundleSummary{CaptureID: m.CaptureID, Node: m.Node, PID: m.Target.PID, URL: m.Target.URL, Exe: m.Target.Exe,
		GoVersion: m.Target.GoVersion, Module: m.Target.ModulePath, Start: m.Start, End: m.End, Sources: []string{},
		GoroutineSnapshots: len(d.snapshots), HeapSnapshots: len(p.heapTS), GoroutineRows: d.rows}
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

// perMinute formats a rate for humans.
func perMinute(v float64) string {
	if math.Abs(v) >= 100 {
		return fmt.Sprintf("%.0f/min", v)
	}
	return fmt.Sprintf("%.1f/min", v)
}
