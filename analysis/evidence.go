package analysis

// candidate is one goroutine site with the evidence gathered about it
// (filled by [gatherEvidence]) and the verdict on it (filled by [judge]).
type candidate struct {
	s *site
	// Evidence.
	rule    *Rule       // the leak pattern the site matches, nil for none
	stmt    *waitStmt   // the statement waited at, read from the kept source, that the rules matched
	leakHit bool        // the goroutineleak profile lists its location
	trace   *traceGroup // trace goroutines of the same creator and entry
	facts   *stuckFacts // the wait-for reasoning over the latest snapshot
	// Verdict.
	sc       siteScore
	retained int64
	growers  []*heapSite // heap sites attributed to it
	// cause is the candidate this one only waits for (folded under it);
	// consequences the candidates folded under this one.
	cause        *candidate
	consequences []*candidate
}

// evidence is the second stage's result: every goroutine site as a
// candidate, and every heap allocation stack's series.
type evidence struct {
	candidates []*candidate
	heap       []*heapStack // largest growth first
	wait       *waitGraph
}

// gatherEvidence classifies every site and collects what each source says
// about it: its rule and source text, the runtime's leak profile, the
// trace windows, the wait-for reasoning over the latest dump; and the heap
// trends of the profiles.
func gatherEvidence(in *loaded, rules []Rule) *evidence {
	ev := &evidence{heap: heapStacks(in.prof, in.st), wait: buildWaitGraph(in.detail, in.st, in.src, in.prog)}
	facts := stuckFactsOf(in, ev.wait)
	for _, s := range in.sites {
		x := &candidate{s: s, facts: facts[s]}
		x.stmt = in.src.waitAt(s.frames, waitKind(s.state, s.frames))
		x.rule = classifyFound(rules, KindGoroutine, s.state, functions(s.frames), x.stmt, x.facts.findings())
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

// siteScore is the verdict on one site.
type siteScore struct {
	fit       Fit
	delta     float64
	survival  float64 // -1 when unknown
	conf      float64
	leak      float64 // confidence from growth, traces and the runtime's leak profile
	stuck     float64 // confidence that the members are stuck for good
	traced    float64 // the trace's part of leak
	grows     float64 // leak without the runtime's marks: the group accumulates
	logit     float64 // the stuck channel's summed log-odds (orders suspects whose scores tie)
	idle      bool    // shaped like an idle pool its owner can still feed
	impact    float64
	score     float64
	evidence  []Evidence
	firstSeen int64
	growFrom  int64 // first snapshot where the count rose
	// from is the first snapshot of the named range the rate is reported
	// over (see namedRange), rate the fit over it: the Fit, GrowthPerMin
	// and growth evidence every view shows.
	from int
	rate Fit
}
