package analysis

import (
	"fmt"
)

// goroutineSuspect assembles a report suspect from a judged candidate
// and its attribution.
func goroutineSuspect(x *candidate, a attribution, ts []int64, maxGoids int, src sourceCache) *Suspect {
	s := x.s
	n := len(s.counts)
	var last float64
	if n > 0 {
		last = s.counts[n-1]
	}
	sus := &Suspect{Kind: KindGoroutine, State: s.state, Location: s.loc.Function, File: s.loc.File, Line: s.loc.Line,
		Creator: s.creator, CreatorFile: a.creatorFile, CreatorLine: a.creatorLine, Ancestry: a.ancestry,
		Count: int64(last), GrowthPerMin: round(x.sc.fit.Slope, 2), Fit: x.sc.fit,
		FirstSeen: tsTime(x.sc.firstSeen), MaxWaitMinutes: s.maxWait, RetainedBytes: x.retained,
		Score: x.sc.score, Evidence: append([]Evidence{}, x.sc.evidence...), StackID: s.stackID, Stack: s.frames}
	if sus.Stack == nil {
		sus.Stack = []Frame{}
	}
	if x.rule != nil {
		sus.Pattern, sus.Title, sus.Description, sus.Fix = x.rule.Pattern, x.rule.Title, x.rule.Description, x.rule.Fix
	} else {
		sus.Pattern, sus.Title = "blocked-other", "goroutines parked with no way out"
	}
	if line := src.line(s.loc.File, s.loc.Line); line != "" {
		sus.Evidence = append(sus.Evidence, Evidence{Kind: "source", Detail: fmt.Sprintf("%s:%d: %s", s.loc.File, s.loc.Line, line)})
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
	sus.Origin, sus.CreationChain = a.origin, a.chain
	sus.Fix = inUserTerms(sus.Fix, a.origin)
	if a.origin != nil {
		sus.Evidence = append(sus.Evidence, Evidence{Kind: "origin", Detail: originText(a.origin, a.chain)})
	}
	if a.span != "" {
		sus.Span = a.span
		sus.Evidence = append(sus.Evidence, Evidence{Kind: "span", Detail: fmt.Sprintf("members were created inside %s (%d of %d sampled)", a.span, a.spanHits, a.spanOf)})
	}
	if x.trace != nil {
		sus.Evidence = append(sus.Evidence, x.trace.evidence())
	}
	for _, h := range x.growers {
		sus.RetainedPerMin += h.grower.BytesPerMin
		sus.Evidence = append(sus.Evidence, Evidence{Kind: "heap",
			Detail: fmt.Sprintf("allocation site %s holds %s and grows %s/min (R²=%.2f)", h.grower.Location, FormatBytes(float64(h.grower.InuseBytes)), FormatBytes(h.grower.BytesPerMin), h.grower.Fit.R2),
			Value:  float64(h.grower.InuseBytes)})
	}
	if x.leakHit {
		sus.LeakProfile = "confirmed"
	}
	return sus
}

// heapSuspect turns a growing allocation site into a suspect.
func heapSuspect(h *heapSite, rules []Rule, src sourceCache) *Suspect {
	g := h.grower
	_, locIdx := locationFrame(g.Stack)
	rule := classify(rules, KindHeap, "", h.funcs, src.context(g.Stack, locIdx))
	sus := &Suspect{Kind: KindHeap, Pattern: "heap-growth", Location: g.Location, File: g.File, Line: g.Line,
		Count: g.InuseBytes, GrowthPerMin: g.BytesPerMin, Fit: g.Fit, Score: h.score, StackID: g.StackID, Stack: g.Stack,
		Ancestry: []string{}, Counts: g.Series}
	if sus.Stack == nil {
		sus.Stack = []Frame{}
	}
	if rule != nil {
		sus.Pattern, sus.Title, sus.Description, sus.Fix = rule.Pattern, rule.Title, rule.Description, rule.Fix
	}
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
	sus.Evidence = []Evidence{{Kind: "heap",
		Detail: fmt.Sprintf("in-use bytes rose by %s to %s over %d heap snapshots: %s/min, R²=%.2f, %.0f%% of steps non-decreasing; objects %+.0f/min",
			FormatBytes(h.delta), FormatBytes(float64(g.InuseBytes)), g.Fit.Points, FormatBytes(g.BytesPerMin), g.Fit.R2, 100*g.Fit.Monotone, g.ObjectsPerMin),
		Value: g.BytesPerMin}}
	if line := src.line(g.File, g.Line); line != "" {
		sus.Evidence = append(sus.Evidence, Evidence{Kind: "source", Detail: fmt.Sprintf("%s:%d: %s", g.File, g.Line, line)})
	}
	return sus
}

// mergeHeapSuspect folds another call path to the same allocating line
// into dst: bytes and growth add up, and the evidence says so.
func mergeHeapSuspect(dst, other *Suspect) {
	dst.Count += other.Count
	dst.GrowthPerMin = round(dst.GrowthPerMin+other.GrowthPerMin, 1)
	if len(dst.Counts) == len(other.Counts) {
		for i := range dst.Counts {
			if dst.Counts[i].TS.Equal(other.Counts[i].TS) {
				dst.Counts[i].Value += other.Counts[i].Value
			}
		}
	}
	dst.Evidence = append(dst.Evidence, Evidence{Kind: "heap",
		Detail: fmt.Sprintf("also allocated here through another call path (stack %d): %s in use, %s/min", other.StackID, FormatBytes(float64(other.Count)), FormatBytes(other.GrowthPerMin)),
		Value:  other.GrowthPerMin})
}

func toInt64(m map[string]int) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = int64(v)
	}
	return out
}

// FormatBytes formats a byte count with a binary unit ("1.5 MiB",
// "-512 B"), as reports and evidence texts print it.
func FormatBytes(v float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	neg := v < 0
	if neg {
		v = -v
	}
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	s := fmt.Sprintf("%.1f %s", v, units[i])
	if i == 0 {
		s = fmt.Sprintf("%.0f B", v)
	}
	if neg {
		s = "-" + s
	}
	return s
}
