package analysis

// candidate is one goroutine site with the evidence gathered about it
// (filled by [gatherEvidence]) and the verdict on it (filled by [judge]).
type candidate struct {
	s *site
	// Evidence.
	rule    *Rule       // the leak pattern the site matches, nil for none
	source  string      // source text the rules matched
	leakHit bool        // the goroutineleak profile lists its location
	trace   *traceGroup // trace goroutines of the same creator and entry
	// Verdict.
	sc       siteScore
	retained int64
	growers  []*heapSite // heap sites attributed to it
}

// evidence is the second stage's result: every goroutine site as a
// candidate, and every heap allocation stack's series.
type evidence struct {
	candidates []*candidate
	heap       []*heapStack // largest growth first
}

// gatherEvidence classifies every site and collects what each source says
// about it: its rule and source text, the runtime's leak profile, the
// trace windows; and the heap trends of the profiles.
func gatherEvidence(in *loaded, rules []Rule) *evidence {
	ev := &evidence{heap: heapStacks(in.prof, in.st)}
	for _, s := range in.sites {
		x := &candidate{s: s}
		_, locIdx := locationFrame(s.frames)
		x.source = in.src.context(s.frames, locIdx)
		x.rule = classify(rules, KindGoroutine, s.state, functions(s.frames), x.source)
		if in.leaks != nil {
			x.leakHit = in.leaks[Frame{Function: s.loc.Function, Line: s.loc.Line}] > 0
		}
		if t := in.tgroups[traceKey{s.creator, s.entry}]; t != nil && s.creator != "" {
			x.trace = t
		}
		ev.candidates = append(ev.candidates, x)
	}
	return ev
}
