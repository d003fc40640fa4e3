package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/leakscope/leakscope/internal/format"
)

// goroutineSuspect assembles a report suspect from a judged candidate
// and its attribution. Count, CountAt, Range and the rate are the
// candidate's figures over the bundle's snapshots, computed once here and
// repeated, never recomputed, by every view.
func goroutineSuspect(in *loaded, x *candidate, a attribution, maxGoids int) *Suspect {
	s, ts := x.s, in.tsOf(x.s)
	n := len(s.counts)
	var last float64
	if n > 0 {
		last = s.counts[n-1]
	}
	sus := &Suspect{Kind: KindGoroutine, State: s.state, Location: s.loc.Function, File: s.loc.File, Line: s.loc.Line,
		Creator: s.creator, CreatorFile: a.creatorFile, CreatorLine: a.creatorLine, Ancestry: a.ancestry,
		Count: int64(last), GrowthPerMin: round(x.sc.rate.Slope, 2), Fit: x.sc.rate,
		FirstSeen: tsTime(x.sc.firstSeen), MaxWaitMinutes: s.maxWait, RetainedBytes: x.retained,
		Score: x.sc.score, Evidence: append([]Evidence{}, x.sc.evidence...), StackID: s.stackID, Stack: s.frames}
	if sus.Stack == nil {
		sus.Stack = []Frame{}
	}
	if n > 0 {
		sus.CountAt = tsTime(ts[n-1])
		r := seriesRange(ts[x.sc.from:], s.counts[x.sc.from:])
		r.Floor, r.FloorBasis = math.Max(3, 0.05*s.counts[0]), "3 goroutines or 5% of the first count, whichever is more"
		sus.Range = &r
		if r.Trend == TrendStep {
			sus.GrowthPerMin = 0 // one rise is a level, not a rate
		}
		for _, g := range s.groups {
			sus.keys = append(sus.keys, g.key)
		}
		sus.only = s.only
		if s.fromProfile {
			sus.StackIDs = s.profileStacks
		}
	}
	sus.Onset = goroutineOnset(in, x)
	if x.rule != nil {
		sus.Pattern, sus.Title, sus.Description, sus.Fix = x.rule.Pattern, x.rule.Title, x.rule.Description, x.rule.Fix
	} else {
		sus.Pattern, sus.Title = "blocked-other", "goroutines parked with no way out"
	}
	if fix := fittingFix(in, x, sus); fix != "" {
		sus.Fix = fix
	}
	sus.Source = in.src.quote(s.loc)
	if e, ok := sourceEvidence(sus.Source); ok {
		sus.Evidence = append(sus.Evidence, e)
	}
	for i, t := range ts {
		sus.Counts = append(sus.Counts, Point{TS: tsTime(t), Value: s.counts[i]})
	}
	if sus.Counts == nil {
		sus.Counts = []Point{}
	}
	if len(s.goids) > 0 {
		sus.Goids = append([]int64(nil), s.goids[:min(len(s.goids), maxGoids)]...)
	}
	attributeEvidence(in, x, a, sus)
	if x.leakHit {
		sus.LeakProfile = "confirmed"
	}
	sus.Confidence = round(x.sc.conf, 3)
	sus.Verdict, sus.Stuck = verdictOf(x.sc)
	if f := x.facts; f != nil {
		for i, o := range f.objects {
			sus.WaitsOn = append(sus.WaitsOn, waitObjectText(o, f.objectAt[i]))
		}
		for c := range f.cycleSites {
			sus.Cycle = append(sus.Cycle, c.loc.Function)
		}
		sort.Strings(sus.Cycle)
		for _, w := range f.infraWaiters {
			sus.Consequences = append(sus.Consequences, Consequence{Location: w.location.Function, File: w.location.File, Line: w.location.Line,
				State: w.state, Count: int64(w.count), Relation: w.relation, Goids: w.goids})
		}
	}
	sus.Consequences = append(sus.Consequences, consequencesOf(x)...)
	return sus
}

// attributeEvidence adds to sus where its goroutines came from (origin,
// creation chain, span, trace) and the heap it is credited with.
func attributeEvidence(in *loaded, x *candidate, a attribution, sus *Suspect) {
	sus.Origin, sus.CreationChain = a.origin, a.chain
	if a.unknown != "" {
		sus.Evidence = append(sus.Evidence, Evidence{Kind: "origin", Detail: a.unknown})
	}
	sus.Fix = inUserTerms(sus.Fix, a.origin)
	if a.origin != nil {
		sus.Evidence = append(sus.Evidence, Evidence{Kind: "origin", Detail: originText(a.origin, a.chain)})
	}
	if a.span != "" {
		sus.Span = a.span
		sus.Evidence = append(sus.Evidence, Evidence{Kind: "span", Detail: fmt.Sprintf("members were created inside %s (%d of %d sampled)", a.span, a.spanHits, a.spanOf)})
	}
	if x.trace != nil {
		sus.Evidence = append(sus.Evidence, x.trace.evidence(in.windows))
	}
	for _, h := range x.growers {
		g := h.grower
		sus.RetainedPerMin += g.BytesPerMin
		sus.heap.add(h)
		sus.Evidence = append(sus.Evidence, Evidence{Kind: "heap",
			Detail: fmt.Sprintf("allocation site %s (%s:%d) holds %s at %s and %s", g.Location, g.File, g.Line, format.Bytes(float64(g.InuseBytes)), clockTime(g.CountAt), heapRateText(g)),
			Value:  float64(g.InuseBytes)})
	}
}

// consequencesOf lists the groups folded under x: those that only wait
// for it, and the machinery (the test runner) waiting for them.
func consequencesOf(x *candidate) []Consequence {
	var out []Consequence
	for _, c := range allConsequences(x) {
		cs := c.s
		if c.facts != nil && c.facts.infraWaiting > 0 && c.facts.unreached == 0 {
			continue // listed below as the machinery waiting for c
		}
		rel := "waits for these goroutines"
		if c.facts != nil {
			rel = consequenceRelation(c.facts.kind)
			if k := c.facts.kind; (k == "lock" || k == "rlock") && x.facts != nil && x.facts.kind != "lock" && x.facts.kind != "rlock" {
				rel = "waits for a lock these goroutines hold while they are blocked in " + x.s.state + " (held while blocked, not a cycle)"
			}
		}
		var n int64
		if k := len(cs.counts); k > 0 {
			n = int64(cs.counts[k-1])
		}
		out = append(out, Consequence{Location: cs.loc.Function, File: cs.loc.File, Line: cs.loc.Line,
			State: cs.state, Count: n, Relation: rel, Goids: cs.goids[:min(len(cs.goids), 8)]})
	}
	for _, c := range allConsequences(x) {
		if c.facts != nil {
			for _, w := range c.facts.infraWaiters {
				out = append(out, Consequence{Location: w.location.Function, File: w.location.File, Line: w.location.Line,
					State: w.state, Count: int64(w.count), Relation: w.relation, Goids: w.goids})
			}
		}
	}
	return out
}

// allConsequences returns the candidates folded under x, and under them,
// nearest first.
func allConsequences(x *candidate) []*candidate {
	var out []*candidate
	seen := map[*candidate]bool{x: true}
	queue := append([]*candidate(nil), x.consequences...)
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if seen[c] {
			continue
		}
		seen[c] = true
		out = append(out, c)
		queue = append(queue, c.consequences...)
	}
	return out
}

// heapSuspect turns a heap site no goroutine group explains into a
// suspect. Its figures are the site's (the grower row shows the same).
func heapSuspect(in *loaded, h *heapSite, rules []Rule) *Suspect {
	g := h.grower
	loc, locIdx := locationFrame(g.Stack)
	var st *waitStmt
	if locIdx >= 0 && isUser(g.Stack[locIdx]) {
		// Statement rules describe the user's code: a library function's
		// statement at the allocating line says nothing of what allocated.
		st = in.src.stmtAt(loc, "")
	}
	rule := classify(rules, KindHeap, "", h.funcs, st)
	sus := &Suspect{Kind: KindHeap, Pattern: "heap-growth", Location: g.Location, File: g.File, Line: g.Line,
		Count: g.InuseBytes, GrowthPerMin: g.BytesPerMin, Fit: g.Fit, Score: h.score, StackID: g.StackID, Stack: g.Stack,
		Ancestry: []string{}, Counts: g.Series, CountAt: g.CountAt, Range: g.Range, Object: g.Object, StackIDs: g.StackIDs, Paths: g.Paths}
	if sus.Stack == nil {
		sus.Stack = []Frame{}
	}
	if rule != nil {
		sus.Pattern, sus.Title, sus.Description, sus.Fix = rule.Pattern, rule.Title, rule.Description, rule.Fix
	}
	sus.heap.add(h)
	if f, i := userFrame(g.Stack); i >= 0 {
		sus.Origin = &Origin{Function: f.Function, File: f.File, Line: f.Line, Basis: basisAlloc}
	}
	sus.Fix = inUserTerms(sus.Fix, sus.Origin)
	for _, p := range g.Series {
		if p.Value > 0 {
			sus.FirstSeen = p.TS
			break
		}
	}
	sus.Onset = heapOnset(in, h)
	paths := ""
	if len(g.StackIDs) > 1 {
		paths = fmt.Sprintf(" (%d call paths", len(g.StackIDs))
		if len(g.Paths) > 1 {
			paths += ", parting at " + strings.Join(g.Paths, ", ")
		}
		paths += ")"
	}
	r := g.Range
	sus.Evidence = []Evidence{{Kind: "heap",
		Detail: fmt.Sprintf("in-use bytes at this line%s rose by %s to %s from %s to %s (%d heap snapshots): %s, R²=%.2f, %.0f%% of steps non-decreasing; objects %s; growth floor %s (%s)",
			paths, format.Bytes(r.Rise), format.Bytes(float64(g.InuseBytes)), clockTime(r.From), clockTime(r.To), r.Points, heapRateText(g), g.Fit.R2, 100*g.Fit.Monotone, format.Rate(g.ObjectsPerMin), format.Bytes(r.Floor), r.FloorBasis),
		Value: g.BytesPerMin}}
	if g.Object != "" {
		sus.Evidence = append(sus.Evidence, Evidence{Kind: "object", Detail: objectText(g)})
	}
	sus.Source = in.src.quote(Frame{Function: g.Location, File: g.File, Line: g.Line})
	if e, ok := sourceEvidence(sus.Source); ok {
		sus.Evidence = append(sus.Evidence, e)
	}
	return sus
}

// heapRateText says how a heap site grows: a rate, or a single rise.
func heapRateText(g HeapGrower) string {
	if g.Range != nil && g.Range.Trend == TrendStep {
		return fmt.Sprintf("rose once by %s, then stayed level (a single step: no rate)", format.Bytes(g.Range.Rise))
	}
	return "grows " + format.Bytes(g.BytesPerMin) + "/min"
}

// objectText says what keeps growing at a heap site.
func objectText(g HeapGrower) string {
	where := fmt.Sprintf("%s:%d", g.File, g.Line)
	switch g.Object {
	case "map":
		return fmt.Sprintf("the map written at %s (in %s) keeps growing: its buckets are what this line allocates, for entries that are never deleted", where, g.Location)
	case "slice grown by append":
		return fmt.Sprintf("the slice appended to at %s (in %s) keeps growing: appends past its capacity copy it into ever larger arrays", where, g.Location)
	case "goroutine stacks":
		return "goroutine structures and stacks: goroutines are created and never end"
	}
	return fmt.Sprintf("%s allocated at %s (in %s) are kept: whatever holds them keeps growing", g.Object, where, g.Location)
}

// linkHeapObjects says, on a heap suspect whose allocations are put in a
// container that grows too (a map written, a slice appended to, in code on
// its stack), which container holds them: the map is what keeps growing,
// not only the buffers put in it. The container's own site may be too
// small to be a suspect (a map's buckets grow slower than its values); it
// is named all the same.
func linkHeapObjects(sus []*Suspect, sites []*heapSite, bySite map[*heapSite]*Suspect, src *sourceCode) {
	for _, s := range sus {
		if s.Kind != KindHeap || isContainer(s.Object) {
			continue
		}
		var holder *heapSite
		for _, h := range sites {
			g := h.grower
			if !isContainer(g.Object) || g.InuseBytes <= 0 || g.StackID == s.StackID || !shareUserFrame(s.Stack, g.Stack) {
				continue
			}
			if holder == nil || g.InuseBytes > holder.grower.InuseBytes {
				holder = h
			}
		}
		if holder == nil {
			linkBySource(s, src)
			continue
		}
		g := holder.grower
		what := "map written"
		if g.Object != "map" {
			what = "slice appended to"
		}
		who := "not a suspect of its own: a container's buckets grow in steps, slower than what it holds"
		if hs := bySite[holder]; hs != nil {
			who = "heap suspect " + hs.ID
			hs.Evidence = append(hs.Evidence, Evidence{Kind: "object",
				Detail: fmt.Sprintf("it holds what %s:%d allocates (%s, %s): those stay as long as the %s keeps them", s.File, s.Line, s.ID, s.Object, g.Object)})
		}
		kind := s.Object
		if kind == "" {
			kind = "values"
		}
		if g.Object == "map" {
			s.Object = fmt.Sprintf("map written at %s:%d (values: %s)", g.File, g.Line, kind)
		} else {
			s.Object = fmt.Sprintf("slice appended to at %s:%d (elements: %s)", g.File, g.Line, kind)
		}
		s.Evidence = append(s.Evidence, Evidence{Kind: "object",
			Detail: fmt.Sprintf("what keeps growing is the %s at %s:%d (in %s), which holds these allocations: its own %s at %s (%s)", what, g.File, g.Line, g.Location, format.Bytes(float64(g.InuseBytes)), clockTime(g.CountAt), who)})
	}
}

// linkBySource names the container a heap suspect's allocations go into
// when its kept source shows it (buf := make(…) then m[k] = buf) and the
// profile shows no bytes of the container itself (its buckets may not be
// sampled at this rate).
func linkBySource(s *Suspect, src *sourceCode) {
	line, kind := src.holder(Frame{Function: s.Location, File: s.File, Line: s.Line})
	if line == 0 {
		return
	}
	what := "values"
	if s.Object != "" {
		what = s.Object
	}
	if kind == "map" {
		s.Object = fmt.Sprintf("map written at %s:%d (values: %s)", s.File, line, what)
	} else {
		s.Object = fmt.Sprintf("slice appended to at %s:%d (elements: %s)", s.File, line, what)
	}
	s.Evidence = append(s.Evidence, Evidence{Kind: "object",
		Detail: fmt.Sprintf("what keeps growing is the %s at %s:%d (in %s): the source kept in the bundle puts what line %d allocates there", strings.TrimSuffix(kind, " grown by append"), s.File, line, s.Location, s.Line)})
}

// isContainer reports whether an object names a growing container.
func isContainer(object string) bool {
	return object == "map" || object == "slice grown by append"
}

// shareUserFrame reports whether two stacks run through a common function
// outside the standard library.
func shareUserFrame(a, b []Frame) bool {
	in := map[string]bool{}
	for _, f := range a {
		if !isStd(f) {
			in[f.Function] = true
		}
	}
	for _, f := range b {
		if !isStd(f) && in[f.Function] {
			return true
		}
	}
	return false
}

// RateText formats a suspect's growth: per minute over its range, or, for
// a series that rose only once, that single rise (a level is not a rate);
// over a single snapshot no growth is measured, and it says so rather
// than "+0.0/min".
func RateText(s Suspect) string {
	if s.Range != nil && s.Range.Points < 2 {
		return "not measured (one snapshot)"
	}
	if s.Range != nil && s.Range.Trend == TrendStep {
		if s.Kind == KindHeap {
			return "rose once by " + format.Bytes(s.Range.Rise)
		}
		return "rose once by " + format.Number(s.Range.Rise)
	}
	return FormatRate(s.GrowthPerMin, s.Kind)
}

// CountText formats a suspect's count.
func CountText(s Suspect) string {
	if s.Kind == KindHeap {
		return format.Bytes(float64(s.Count))
	}
	return format.Count(s.Count, "goroutine")
}

// OnsetRange says when an onset probably was and between which times.
func OnsetRange(o *Onset) string {
	at := format.Time(o.At)
	switch {
	case !o.Earliest.IsZero() && o.Earliest.Equal(o.Latest):
		return fmt.Sprintf("%s (%s)", at, o.Basis)
	case !o.Earliest.IsZero() && !o.Latest.IsZero():
		return fmt.Sprintf("about %s (between %s and %s; %s)", at, format.Time(o.Earliest), format.Time(o.Latest), o.Basis)
	case !o.Latest.IsZero():
		return fmt.Sprintf("about %s (at the latest %s; %s)", at, format.Time(o.Latest), o.Basis)
	}
	return fmt.Sprintf("about %s (%s)", at, o.Basis)
}

// verdictText words a suspect's verdict for every view.
func verdictText(s *Suspect) string {
	if s.Verdict == "" {
		return ""
	}
	v := s.Verdict
	if s.Verdict == "leaking" && s.Stuck {
		v += ", its members stuck for good"
	}
	return fmt.Sprintf("%s (confidence %.2f)", v, s.Confidence)
}

// display formats a suspect's figures once, for every view.
func display(s *Suspect) *SuspectText {
	t := &SuspectText{Score: format.Score(s.Score), Count: CountText(*s), CountAt: format.Time(s.CountAt), Rate: RateText(*s), FirstSeen: format.Time(s.FirstSeen)}
	if r := s.Range; r != nil {
		rise := fmt.Sprintf("%+.0f", r.Rise)
		if s.Kind == KindHeap {
			rise = format.Bytes(r.Rise)
			if r.Rise >= 0 {
				rise = "+" + rise
			}
		}
		t.Range = fmt.Sprintf("from %s to %s, %s, %s", format.Time(r.From), format.Time(r.To), format.Count(int64(r.Points), "snapshot"), rise)
		if r.Points < 2 {
			t.Range = "one snapshot, at " + format.Time(r.To)
		}
	}
	if s.Onset != nil {
		t.Onset = OnsetRange(s.Onset)
	}
	if s.RetainedBytes > 0 {
		t.Retained = format.Bytes(float64(s.RetainedBytes))
	}
	t.Verdict = verdictText(s)
	return t
}

// consequenceRelation says how a group of a wait kind waits for its cause.
func consequenceRelation(kind string) string {
	switch kind {
	case "waitgroup":
		return "waits in WaitGroup.Wait for these goroutines to call Done"
	case "lock", "rlock":
		return "waits for a lock these goroutines hold"
	case "chan receive":
		return "waits for a value (or a close) these goroutines would send"
	case "chan send":
		return "waits for these goroutines to receive"
	case "cond":
		return "waits for a Signal these goroutines would give"
	}
	return "waits for these goroutines"
}

// minHeapSamples is how many heap profile samples the in-use rise of an
// incident's allocation sites must stand for before a heap figure per
// call is given: below it one sample more or less changes the figure by
// more than a tenth.
const minHeapSamples = 10

// add counts one allocation site's rise.
func (r *heapRise) add(h *heapSite) {
	r.sites++
	if h.rise > 0 {
		r.bytes += h.rise
	}
	r.weight = math.Max(r.weight, h.weight)
	if g := h.grower.Range; g != nil {
		r.minutes = math.Max(r.minutes, g.To.Sub(g.From).Minutes())
	}
}

// join adds another suspect's sites.
func (r *heapRise) join(o heapRise) {
	r.bytes += o.bytes
	r.sites += o.sites
	r.weight = math.Max(r.weight, o.weight)
	r.minutes = math.Max(r.minutes, o.minutes)
}

// heapPerCall is the in-use rise of an incident's allocation sites per
// call over the heap snapshots, its bound (two standard errors of the
// rise from sampling: the rise is a count of samples of the weight), and
// the text saying both or why they are not given.
func heapPerCall(r heapRise, callsPerMin float64) (perCall, bound float64, text string) {
	switch {
	case r.sites == 0:
		return 0, 0, "heap per call unknown: no allocation site of the heap profiles is attributed to it (or the bundle has no heap profiles)"
	case r.minutes <= 0 || callsPerMin <= 0:
		return 0, 0, "heap per call unknown: the heap snapshots span no time"
	case r.bytes <= 0:
		return 0, 0, "no heap rise measured at its allocation sites"
	}
	samples := r.bytes / r.weight
	if samples < minHeapSamples {
		return 0, 0, fmt.Sprintf("heap per call unknown: its allocation sites rose by %s, < %d heap samples of %s each; capture longer, or raise the sampling rate (runtime.MemProfileRate = 64 << 10 in the target)",
			format.Bytes(r.bytes), minHeapSamples, format.Bytes(r.weight))
	}
	calls := callsPerMin * r.minutes
	perCall = math.Round(r.bytes / calls)
	bound = math.Round(2 * math.Sqrt(r.bytes*r.weight) / calls)
	return perCall, bound, fmt.Sprintf("~%s ± %s of heap per call (in-use rise of %d allocation sites over %.1f min, %.0f calls; ± two standard errors of heap sampling)",
		format.Bytes(perCall), format.Bytes(bound), r.sites, r.minutes, calls)
}
