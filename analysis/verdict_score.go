package analysis

import (
	"fmt"
	"math"
	"slices"

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
