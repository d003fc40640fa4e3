package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/leakscope/leakscope/internal/format"
)

// scoreSite is the one scoring function: it weighs everything known
// about a site into a score from 0 to 100 (docs/DESIGN.md, "Scoring").
//
// Two kinds of evidence, each a confidence from 0 to 1, combine as
// independent witnesses (1 − (1−leak)(1−stuck)):
//
//   - leak: the strongest of growth (R² × monotonicity × survival of
//     members between snapshots, when the count rose by enough, discounted
//     when it stalls at the end), a trace window where such goroutines
//     were created and none ended, and the runtime's goroutineleak
//     marking;
//   - stuck: a logistic over summed log-odds weights (stuckWeights): the
//     wait kind, how long members have waited, persistence across
//     snapshots, the wait-for reasoning (cycles, nothing able to run
//     holding what they wait on, or something that does). The runtime's
//     own marks count in leak, once.
//
// Impact grows with member count, growth rate, retained heap and, for
// stuck groups, what they block (a cycle, a lock others wait on) and how
// long; on log scales. Score = 100 × confidence × (0.4 + 0.6 × impact);
// benign patterns (running, runtime workers) count half.
func scoreSite(x *candidate, ts []int64) siteScore {
	s, sf := x.s, x.facts
	sc := siteScore{survival: -1}
	sc.series(s, ts)
	growth := sc.growthEvidence(s)
	traced := tracedLeak(s, x.trace)
	var leak float64
	if x.leakHit || s.leaked > 0 {
		leak = 0.95
		sc.evidence = append(sc.evidence, Evidence{Kind: "goroutineleak", Detail: "the Go runtime's leak detector marked these goroutines as leaked (blocked on objects no running goroutine can reach)"})
	}
	endless := endlessLeak(sf)
	if endless > 0 {
		sc.evidence = append(sc.evidence, Evidence{Kind: "never-ends", Weight: logOdds(endless), Value: float64(sf.endless),
			Detail: fmt.Sprintf("%s range over a Ticker's C with no way out of the loop (the time package never closes it), started by a call that has returned: they can never end, so if that call runs per job or request each call leaks one (a fixed pool started once is a background loop nothing can stop)", format.Count(float64(sf.endless), "goroutine"))})
	}
	sc.leak = math.Max(math.Max(math.Max(growth, traced), leak), endless)
	sc.traced = traced
	sc.grows = math.Max(growth, traced)
	for i, e := range sc.evidence {
		switch e.Kind {
		case "growth":
			sc.evidence[i].Weight = logOdds(growth)
		case "goroutineleak":
			sc.evidence[i].Weight = logOdds(leak)
		}
	}
	weights, idle := stuckWeights(s, sf)
	sc.idle = idle
	sum := stuckPrior
	for _, e := range weights {
		sum += e.Weight
	}
	if len(weights) > 0 {
		sc.logit = round(sum, 2)
		sc.stuck = round(logistic(sum), 4)
		sc.evidence = append(sc.evidence, weights...)
	}
	sc.conf = 1 - (1-sc.leak)*(1-sc.stuck)
	sc.scoreImpact(s, sf, x.retained, x.rule)
	return sc
}

// series fits a site's counts: when it was first seen, the fit over all
// snapshots and over the range the rate is named for, the rise, when it
// started to grow, and the share of members that survived from the
// snapshot before.
func (sc *siteScore) series(s *site, ts []int64) {
	n := len(s.counts)
	for i, c := range s.counts {
		if c > 0 {
			sc.firstSeen = ts[i]
			break
		}
	}
	sc.fit = fitSeries(ts, s.counts)
	if n > 0 {
		sc.from = namedRange(s.counts)
		sc.rate = fitSeries(ts[sc.from:], s.counts[sc.from:])
	}
	if n >= 2 {
		sc.delta = lastCount(s) - s.counts[0]
		for i := 1; i < n; i++ {
			if s.counts[i] > s.counts[i-1] {
				sc.growFrom = ts[i-1]
				break
			}
		}
	}
	if s.prevCount > 0 && !s.fromProfile {
		survived := s.survived
		if s.exact {
			survived = s.exactSurvived
		}
		sc.survival = clamp01(float64(survived) / float64(s.prevCount))
	}
}

// growthEvidence weighs the rise of a site's count into the leak
// confidence growth gives, with its evidence records.
func (sc *siteScore) growthEvidence(s *site) float64 {
	n, last := len(s.counts), lastCount(s)
	var growth float64
	minDelta := math.Max(3, 0.05*s.counts[0])
	// A queue on a lock that is handed on grows with its callers; it is
	// no accumulation of its own (stuckWeights says so: "contended").
	if left, _ := s.handedOn(); left > 0 {
		minDelta = math.Inf(1)
	}
	if n >= 3 && sc.fit.Slope > 0 && sc.delta >= minDelta {
		surv := 1.0
		if sc.survival >= 0 {
			surv = sc.survival
		}
		// Few goroutines are weak evidence however clean the line.
		growth = clamp01(sc.fit.R2) * sc.fit.Monotone * surv * math.Sqrt(clamp01(sc.delta/10))
		// Growth that stopped before the end (a connection pool warming
		// up) is weaker evidence than growth that goes on.
		recent := recentGrowth(s.counts)
		growth *= 0.3 + 0.7*recent
		sc.evidence = append(sc.evidence, Evidence{Kind: "growth",
			Detail: fmt.Sprintf("count rose from %.0f to %.0f over %d snapshots: %s, R²=%.2f, %.0f%% of steps non-decreasing", s.counts[sc.from], last, n-sc.from, FormatRate(round(sc.rate.Slope, 2), KindGoroutine), sc.rate.R2, 100*sc.rate.Monotone),
			Value:  sc.rate.Slope})
		if recent < 0.5 {
			sc.evidence = append(sc.evidence, Evidence{Kind: "plateau",
				Detail: fmt.Sprintf("growth slowed at the end: the last third of the snapshots rose %.0f%% of what a steady trend would", 100*recent), Value: recent})
		}
		if sc.survival >= 0 {
			sc.evidence = append(sc.evidence, Evidence{Kind: "survival",
				Detail: fmt.Sprintf("%.0f%% of members were still parked here in the next snapshot (leaked goroutines never leave)", 100*sc.survival),
				Value:  sc.survival})
		}
	}
	// Two snapshots show a rise but not its shape: half weight.
	if n == 2 && sc.fit.Slope > 0 && sc.delta >= minDelta {
		surv := 1.0
		if sc.survival >= 0 {
			surv = sc.survival
		}
		growth = 0.5 * surv * math.Sqrt(clamp01(sc.delta/10))
		sc.evidence = append(sc.evidence, Evidence{Kind: "growth",
			Detail: fmt.Sprintf("count rose from %.0f to %.0f between two snapshots (%s)", s.counts[sc.from], last, FormatRate(round(sc.rate.Slope, 2), KindGoroutine)), Value: sc.rate.Slope})
	}
	return growth
}

// tracedLeak is the leak confidence of a trace window in which
// goroutines of this kind were created and none ended: members a trace
// saw created and alive, unless the dumps saw the group and then saw it
// gone (they ended after the window).
func tracedLeak(s *site, tr *traceGroup) float64 {
	n := len(s.counts)
	if tr == nil || tr.alive < 5 || n > 0 && lastCount(s) == 0 && slices.Max(s.counts) > 0 {
		return 0
	}
	traced := 0.8 * float64(tr.alive) / float64(tr.alive+tr.ended) * math.Sqrt(clamp01(float64(tr.alive)/20))
	if tr.ended > 0 {
		traced *= 0.5
	}
	return traced
}

// scoreImpact sets the impact (count, growth rate, retained heap and,
// for a stuck group, what it blocks) and the score.
func (sc *siteScore) scoreImpact(s *site, sf *stuckFacts, retained int64, rule *Rule) {
	impCount := clamp01(math.Log10(1+lastCount(s)) / 4)
	impRate := clamp01(math.Log10(1+math.Max(0, sc.fit.Slope)) / 3)
	impHeap := clamp01(math.Log10(1+float64(retained)/(1<<20)) / 3)
	sc.impact = math.Max(impCount, math.Max(impRate, impHeap))
	if sc.stuck > sc.leak {
		sc.impact = math.Max(sc.impact, stuckImpact(s, sf))
	}
	sc.score = 100 * sc.conf * (0.4 + 0.6*sc.impact)
	if rule != nil && rule.Benign {
		sc.score /= 2
	}
	sc.score = round(sc.score, 1)
}

// endlessLeak is the leak confidence from goroutines that can never end
// (stuckFacts.endless): one is a background loop as often as a leak, so
// it takes two or more from one go statement, and more for certainty.
func endlessLeak(sf *stuckFacts) float64 {
	if sf == nil || sf.endless < 2 {
		return 0
	}
	return 0.6 * math.Sqrt(clamp01(float64(sf.endless)/10))
}

// stuckAt is the stuck confidence from which a group's members count as
// parked for good.
const stuckAt = 0.5

// verdictOf is a goroutine group's one verdict (docs/DESIGN.md, "One
// verdict"): "leaking" when it accumulates (any growth evidence: a rise
// with members surviving, or a trace window's goroutines created and
// never ended), however stuck its members are; "stuck" when its members
// are parked for good and it does not grow; "" when neither. stuck says
// the members are parked for good. Every capture that sees the group
// grow says "leaking", whichever evidence weighs more in it.
func verdictOf(sc siteScore) (verdict string, stuck bool) {
	stuck = sc.stuck >= stuckAt
	switch {
	case sc.grows > 0:
		return "leaking", stuck
	case sc.stuck >= sc.leak && sc.stuck > 0:
		return "stuck", stuck
	case sc.leak > 0:
		return "leaking", stuck
	}
	return "", stuck
}

// stuckWeights lists the stuck channel's evidence for a site, each with
// its weight, and whether the site is an idle pool. Sites that are not
// parked (running, in IO wait, asleep, the runtime's) get none.
func stuckWeights(s *site, f *stuckFacts) ([]Evidence, bool) {
	kind := waitKind(s.state, s.frames)
	if kind == "" || isInfraStack(s.frames) || isInfraState(s.state) {
		return nil, false
	}
	if f != nil && f.parked == 0 && f.members > 0 {
		return nil, false // timer waits: they can run
	}
	if (kind == "forever") && s.entry == "main.main" {
		return nil, false // main parked on purpose once everything is started
	}
	var ev []Evidence
	add := func(kind string, w float64, detail string, args ...any) {
		ev = append(ev, Evidence{Kind: kind, Weight: round(w, 2), Detail: fmt.Sprintf(detail, args...)})
	}
	switch kind {
	case "forever", "nil":
		add("blocked", wForever, "%s: nothing can ever wake it", s.state)
	case "lock", "rlock":
		add("blocked", wLock, "waiting for a lock (%s)", s.state)
	case "chan send", "sema":
		add("blocked", wSend, "waiting in %s", s.state)
	default:
		add("blocked", 0, "waiting in %s", s.state)
	}
	if m := s.maxWait; m >= 1 {
		add("long-wait", math.Min(wMinutesMax, wMinutesPerLn*math.Log1p(float64(m))), "members have waited up to %s, by the runtime's count", format.Count(int64(m), "minute"))
	}
	if f != nil && f.snapshots >= 2 && s.persist.members > 0 {
		p := s.persist
		share := float64(p.persisted) / float64(p.members)
		persistWeights(s, f, add)
		if share < 1 {
			add("churn", wChurn*(1-share), "%d of %d were not parked here in the snapshot before", p.members-p.persisted, p.members)
		}
	}
	if f != nil {
		progressWeights(s, f, add)
	}
	if left, prev := s.handedOn(); left > 0 {
		add("contended", wHandedOn*math.Sqrt(float64(left)/float64(prev)),
			"%d of %d goroutines waiting for this lock in an earlier snapshot have got it since: the lock is contended and handed on, not stuck (a queue that grows on it grows with its callers)", left, prev)
	}
	idle := false
	if f != nil && f.parked > 0 && kind != "forever" && kind != "nil" {
		idle = waitForWeights(f, kind, add)
		if _, i := userFrame(s.frames); i < 0 && !idle && f.unreached > 0 && f.liveElsewhere && f.inCycle == 0 {
			add("library", wLibrary, "no frame of the program's own code: a library's machinery parked while the program runs (what wakes it hangs off the heap, out of the frames' sight); a leak of it shows by growth, a trace or the runtime's marks")
		}
	}
	return ev, idle
}

// waitForWeights adds the wait-for graph's evidence and reports an idle
// pool.
func waitForWeights(f *stuckFacts, kind string, add func(string, float64, string, ...any)) bool {
	n := float64(f.parked)
	if f.idlePool() {
		if 2*f.byFamily >= f.parked {
			add("idle-pool", wIdlePool, "idle: for %d of %d the function that started them, or a child of theirs, still runs and can feed them", f.byFamily, f.parked)
		} else {
			add("idle-pool", wIdlePool, "idle workers: they wait for work at the top of their loop while other goroutines of the program run and may feed them")
		}
		return true
	}
	if f.byProgram > 0 {
		add("wakeable", wMention*float64(f.byProgram)/n, "%d of %d can be woken, as the program shows: %s", f.byProgram, f.parked, f.wokeHow)
	}
	if rest := f.byMention - f.byProgram; rest > 0 {
		add("wakeable", wMention*float64(rest)/n, "%d of %d wait on an object (%s) that a goroutine able to run holds", rest, f.parked, formatObjects(f.objects, f.objectAt))
	}
	if f.byFamily > 0 {
		add("wakeable", wFamily*float64(f.byFamily)/n, "%d of %d have a creator or child that can still run and may feed them", f.byFamily, f.parked)
	}
	if fam := f.familyProducer - f.inCycle; fam > 0 {
		add("wakeable", wFamilyProducer*float64(fam)/n, "%d of %d have a creator or child that can still run", fam, f.parked)
	}
	if f.unreached == 0 {
		return false
	}
	if f.inCycle > 0 {
		how := ""
		if f.possibleCycle {
			how = "; no frame prints the lock's holder or the channel's partner: the goroutines started by the same call (or closures of it) that wait there are taken as each other's, the lock held across the channel operation"
		}
		add("wait-cycle", wCycle*float64(f.inCycle)/n, "%d of %d are in a wait-for cycle: each waits for what only the others hold%s%s", f.inCycle, f.parked, cycleWith(f), how)
	}
	on := ""
	if len(f.objects) > 0 {
		on = " (" + formatObjects(f.objects, f.objectAt) + ")"
	}
	if (kind == "chan receive" || kind == "select") && f.depth == 0 && !f.noLoop {
		add("top-of-loop", wTopOfLoop, "they wait for work at the top of their own loop, as a server or worker out of work does: often the consequence of the bug, not its place")
	}
	unreachableWeights(f, on, add)
	if f.selfHeld > 0 {
		add("held-by-self", wSelfHeld*float64(f.selfHeld)/n, "%d of %d already hold the lock they wait for, as their source shows: %s; only they could release it", f.selfHeld, f.parked, f.selfHeldNote)
	}
	if f.timerBound > 0 {
		add("timer-bound", wTimerBound*float64(f.timerBound)/n, "%d of %d wait in a select or receive whose statement the source does not show; blocked at least %s, so no timer case shorter than that is live, but a longer one cannot be ruled out (the source would tell)", f.timerBound, f.parked, format.Count(float64(f.timerBoundMin), "minute"))
	}
	if f.possible > 0 {
		add("possible-holder", wPossible*float64(f.possible)/n, "%d of %d: a goroutine that can run may hold what they wait on though no frame prints it: %s", f.possible, f.parked, holderNotes(f.possibleNotes))
	}
	noWakerWeights(f, kind, on, add)
	return false
}

// unreachableWeights weighs unreached members: nothing able to run
// holds what they wait on, and, when nothing of the program can run,
// all asleep (with what that claim rests on).
func unreachableWeights(f *stuckFacts, on string, add func(string, float64, string, ...any)) {
	decidedWeights(f, on, add)
	u := float64(f.unreached-f.decided) / float64(f.parked)
	ruled := ""
	if len(f.ruledOut) > 0 {
		ruled = "; possible holders ruled out: " + holderNotes(f.ruledOut)
	}
	switch {
	case f.unreached == f.decided && !f.liveElsewhere:
		allAsleepWeights(f, add)
		return
	case f.unreached == f.decided:
		return
	}
	if f.liveElsewhere {
		add("unreachable", wUnreachedLive*u, "%d of %d wait on what%s no goroutine able to run holds in its frames, and every goroutine that holds it is parked%s", f.unreached-f.decided, f.parked, on, ruled)
	} else {
		add("unreachable", wUnreached*u, "%d of %d wait on what%s no goroutine able to run holds, and every goroutine that holds it is parked%s", f.unreached-f.decided, f.parked, on, ruled)
		allAsleepWeights(f, add)
	}
}

// allAsleepWeights says that no goroutine of the program can run, with
// what that claim rests on, or why it cannot be made.
func allAsleepWeights(f *stuckFacts, add func(string, float64, string, ...any)) {
	if f.undecided > 0 {
		add("timer-unknown", 0, "not all asleep for certain: %s of the program wait in a select or receive whose source is absent, so a timer case that wakes them cannot be ruled out (the source would tell)", format.Count(float64(f.undecided), "goroutine"))
		return
	}
	not := ""
	if len(f.dumping) > 0 {
		not = "; not counted: " + strings.Join(f.dumping, "; ")
	}
	switch {
	case f.runtimeAsleep != "":
		add("all-asleep", wAllAsleep, "the runtime itself stopped the program (%s: %q): no goroutine could run and no timer was pending, so no select or receive had a timer case left to fire%s", f.runtimeAsleep, allAsleepMessage, not)
	case f.asleepBound > 0:
		add("all-asleep", wAllAsleep*wAsleepBound, "no goroutine of the program can run (only the runtime, the profiler and the test runner), unless a select or receive whose statement the source does not show, blocked %s or more, has a timer case longer than that (the source would tell)%s", format.Count(float64(f.asleepBound), "minute"), not)
	default:
		add("all-asleep", wAllAsleep, "no goroutine of the program can run (only the runtime, the profiler and the test runner)%s", not)
	}
}

// decidedWeights weighs the unreached members whose wait the program
// read as Go shows: every statement that could end it is known, and none
// can still run (or there is none at all).
func decidedWeights(f *stuckFacts, on string, add func(string, float64, string, ...any)) {
	if f.decided == 0 {
		return
	}
	d := float64(f.decided) / float64(f.parked)
	what := "it"
	if len(f.globals) > 0 {
		what = strings.Join(f.globals, ", ") + " (a package-level variable)"
	}
	if len(f.releasers) == 0 {
		add("unreachable", wDecided*d, "%d of %d wait on what%s no statement of the program can release: read from the program as Go, no statement %s %s", f.decided, f.parked, on, releaseVerb(f.kind), what)
		runtime := ""
		if len(f.globals) > 0 {
			runtime = " (a finding the runtime's goroutineleak detection cannot make: it takes what a package-level variable holds as reachable)"
		}
		if len(f.deadlines) > 0 {
			add(kindNoReleaser, wNoReleaser*d, "nothing but a deadline can wake them: no statement of the program %s %s, and none calls the cancel function of %s (dropped, as go vet's lostcancel warns), so they wait until its deadline passes", releaseVerb(f.kind), what, strings.Join(f.deadlines, ", "))
			return
		}
		add(kindNoReleaser, wNoReleaser*d, "nothing can ever wake them: no statement of the program %s %s, so no goroutine, running or yet to start, can%s", releaseVerb(f.kind), what, runtime)
		return
	}
	if b := f.bound; b != nil {
		stuck := min(b.stuck, f.decided)
		add("unreachable", wDecided*float64(stuck)/float64(f.parked), "%d of %d wait on what%s only these statements of the program can release: %s; %s", f.decided, f.parked, on, strings.Join(f.releasers, "; "), b.String())
		return
	}
	add("unreachable", wDecided*d, "%d of %d wait on what%s only these statements of the program can release: %s; none can still run: every goroutine whose frames lead to one is parked, and no goroutine that can run reaches one", f.decided, f.parked, on, strings.Join(f.releasers, "; "))
}

// kindNoReleaser is the evidence of a wait no statement of the program
// can end.
const kindNoReleaser = "no-releaser"

// releaseVerb says what would end a wait of a kind.
func releaseVerb(kind string) string {
	switch kind {
	case "chan receive":
		return "sends on or closes"
	case "chan send":
		return "receives from"
	case "select":
		return "sends on, receives from or closes"
	case "lock", "rlock":
		return "unlocks"
	case "waitgroup":
		return "calls Done on"
	case "cond":
		return "signals"
	}
	return "releases"
}

// noWakerWeights weighs members whose object no other goroutine holds,
// by wait kind.
func noWakerWeights(f *stuckFacts, kind, on string, add func(string, float64, string, ...any)) {
	n := float64(f.parked)
	if f.noWaker > 0 {
		share := (float64(f.noWakerExact) + wNoWakerVia*float64(f.noWaker-f.noWakerExact)) / n
		switch kind {
		case "lock", "rlock":
			add("no-holder", wNoHolder*share, "no other goroutine holds the lock%s: it was never unlocked, is locked twice, or lives in a global", on)
		case "chan send", "chan receive":
			add("no-partner", wNoPartner*share, "every goroutine holding the channel%s is parked on the same side of it", on)
		case "waitgroup":
			add("no-worker", wNoWorker*share, "no goroutine that could call Done holds the WaitGroup%s, and the waiter has no children left", on)
		case "cond":
			if f.signalled > 0 {
				break // the tickets show it signalled
			}
			add("no-signaller", wNoHolder*share, "no other goroutine holds the Cond%s to Signal or Broadcast it", on)
		}
	}
}

// stuckImpact is what a stuck group blocks: other goroutines (a cycle, a
// lock or result they wait on) and for how long.
func stuckImpact(s *site, f *stuckFacts) float64 {
	imp := 0.6
	if f != nil {
		if f.inCycle > 0 {
			imp = 0.9
		} else if len(f.infraWaiters) > 0 || f.holdsForOthers > 0 {
			imp = 0.8
		}
	}
	return math.Max(imp, clamp01(math.Log10(1+float64(s.maxWait))/2.5))
}

func cycleWith(f *stuckFacts) string {
	var names []string
	for s := range f.cycleSites {
		names = append(names, s.loc.Function)
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return " (with " + strings.Join(names, ", ") + ")"
}

func logistic(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// logOdds is the weight of a confidence c against even odds.
func logOdds(c float64) float64 {
	c = math.Max(1e-4, math.Min(1-1e-4, c))
	return round(math.Log(c/(1-c)), 2)
}
