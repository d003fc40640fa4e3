package analysis

import "math"

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
	splitMixed(in, ev.wait)
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

// fitSeries fits a least-squares line through (ts, v) pairs, ts in Unix
// nanoseconds, and reports the slope per minute, R² and the share of steps
// that do not go down.
func fitSeries(ts []int64, v []float64) Fit {
	n := len(ts)
	f := Fit{Points: n}
	if n < 2 {
		return f
	}
	l := fitLine(ts, v)
	f.Slope, f.R2 = l.slope, l.r2
	up := 0
	for i := 1; i < n; i++ {
		if v[i] >= v[i-1] {
			up++
		}
	}
	f.Monotone = float64(up) / float64(n-1)
	f.Slope = round(f.Slope, 4)
	f.R2 = round(f.R2, 4)
	f.Monotone = round(f.Monotone, 4)
	return f
}

// line is a least-squares line v = a + slope·(t − t0) over minutes since
// t0, with the standard error of its slope.
type line struct {
	t0        int64
	a, slope  float64
	r2        float64
	slopeErr  float64 // standard error of the slope (0 with fewer than 3 points)
	meanT     float64 // minutes since t0
	meanV     float64
	hasSpread bool // the times are not all equal
}

// fitLine fits the least-squares line through (ts, v).
func fitLine(ts []int64, v []float64) line {
	n := len(ts)
	l := line{t0: ts[0]}
	var sx, sy float64
	for i := range ts {
		sx += float64(ts[i]-l.t0) / 60e9
		sy += v[i]
	}
	l.meanT, l.meanV = sx/float64(n), sy/float64(n)
	var sxx, sxy, syy float64
	for i := range ts {
		dx := float64(ts[i]-l.t0)/60e9 - l.meanT
		dy := v[i] - l.meanV
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx > 0 {
		l.hasSpread = true
		l.slope = sxy / sxx
		if syy > 0 {
			l.r2 = sxy * sxy / (sxx * syy)
		}
		if n > 2 {
			res := math.Max(0, syy-l.slope*sxy)
			l.slopeErr = math.Sqrt(res / float64(n-2) / sxx)
		}
	}
	l.a = l.meanV - l.slope*l.meanT
	return l
}

// zeroAt returns when a line with the given slope through the series'
// mean reaches zero, in Unix nanoseconds; ok is false for slopes not
// above zero.
func (l line) zeroAt(slope float64) (int64, bool) {
	if slope <= 0 {
		return 0, false
	}
	minutes := l.meanT - l.meanV/slope
	return l.t0 + int64(minutes*60e9), true
}

func clamp01(x float64) float64 { return math.Max(0, math.Min(1, x)) }

// recentGrowth compares the rise over the last third of a series with
// the share of the whole rise a steady trend puts there, from 0 (flat or
// falling at the end: a pool that filled up, a burst that stopped) to 1
// (still growing as fast). It goes by snapshot index, not time, so jitter
// in when snapshots were taken does not count as a slowdown.
func recentGrowth(v []float64) float64 {
	n := len(v)
	if n < 3 {
		return 0
	}
	k := n - 1 - max(1, (n-1)/3)
	want := (v[n-1] - v[0]) * float64(n-1-k) / float64(n-1)
	if want <= 0 {
		return 0
	}
	return clamp01((v[n-1] - v[k]) / want)
}

// namedRange is the index of the first snapshot of the range a series'
// rate is reported over: from its first sighting (a group that appears
// during the capture grows from there, and the snapshots before, when it
// did not exist yet, would bend the line), or, with fewer than three
// sightings, from the last snapshot before them.
func namedRange(v []float64) int {
	lo := 0
	for lo < len(v) && v[lo] <= 0 {
		lo++
	}
	if lo == len(v) {
		return 0
	}
	if len(v)-lo < 3 && lo > 0 {
		lo--
	}
	return lo
}

// The stuck channel of [scoreSite]: log-odds weights, summed onto
// stuckPrior and turned into a confidence by the logistic function. A
// weight of +1 multiplies the odds that the group is stuck by e (2.7);
// docs/DESIGN.md ("Scoring") lists them with what each means.
const (
	// stuckPrior: a parked group, knowing nothing else, is stuck about
	// one time in twenty (most parked goroutines wait for work).
	stuckPrior = -3.0

	wForever        = 7.0  // select {} or a nil channel: nothing can ever wake it
	wLock           = 1.0  // a lock is rarely held for long in a healthy program
	wSend           = 0.5  // a send waits for one particular partner
	wMinutesPerLn   = 1.2  // × ln(1+minutes) the runtime says they waited
	wMinutesMax     = 5.0  //
	wPersistBase    = 1.0  // parked identically in consecutive snapshots …
	wPersistPerLn   = 0.8  // … + this × ln(1+seconds between them)
	wPersistMax     = 4.0  //
	wPersistFrozen  = 0.6  // × when nothing else in the process changed either
	wChurn          = -1.5 // × share of members that were not there (or elsewhere) before
	wHandedOn       = -6.0 // × √(share of a lock's earlier waiters that have got it since)
	wCycle          = 4.5  // a wait-for cycle: each waits for what only the others can release
	wUnreached      = 2.5  // nothing that can run holds what they wait on
	wUnreachedLive  = 1.5  // the same while other goroutines can run (a global may hide a waker)
	wAllAsleep      = 1.5  // no goroutine of the program can run at all
	wNoHolder       = 1.0  // a lock (or Cond) nobody else holds: never released, or locked twice
	wNoPartner      = 1.5  // a channel whose every holder waits on the same side
	wNoWorker       = 1.5  // a WaitGroup no goroutine that could call Done holds
	wNoWakerVia     = 0.5  // × when only what the object was reached through is known
	wMention        = -10  // a goroutine that can run holds what they wait on
	wPossible       = -3.0 // × share that a goroutine able to run may hold though no frame shows it (a closure, a sibling, a global)
	wWoken          = -8.0 // × share of members the runtime's counters show woken between snapshots
	wSignalled      = -6.0 // × share waiting on a Cond whose tickets show it signalled far more often than it is waited on now
	wFamily         = -4.0 // their creator or children can run and may feed them
	wFamilyProducer = -1.5 // … for a lock, send or WaitGroup their creator rarely releases
	wIdlePool       = -10  // idle workers their owner can still feed
	wTopOfLoop      = -1.2 // waiting for work at the top of their loop: more often a consequence
	wLibrary        = -3.0 // no frame of the program's own code, while the program runs elsewhere
	wSelfHeld       = 4.5  // × share whose source shows they hold the lock they wait for (as a cycle of one)
	wNoReleaser     = 4.0  // × share waiting on what no statement of the program can release
	wDecided        = 4.0  // × share the program read as Go shows no goroutine that can run can ever wake
	wTimerBound     = -1.0 // × share parked only because a minute's wait rules out shorter timer cases: a longer one may remain
	wAsleepBound    = 0.5  // × wAllAsleep when the claim rests on such waits
)
