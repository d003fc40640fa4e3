package analysis

import (
	"math"
	"sort"
)

// verdicts is the third stage's result: what is reported and how sure.
type verdicts struct {
	// lookAlikes are parked groups the stuck verdict let go.
	lookAlikes []*candidate
	// goroutines are the candidates that make the cut, best first.
	goroutines []*candidate
	// heap are growing heap sites reported as suspects of their own (no
	// goroutine group explains them), largest rise first.
	heap []*heapSite
	// sites are every growing heap site (an allocating line for one
	// reported group, or for none), largest rise first; all holds the
	// sites that do not grow too.
	sites []*heapSite
	all   []*heapSite
	// sight is the slowest heap growth the heap profiles can name.
	sight *HeapSight
}

// judge scores every candidate, attributes heap growth to the goroutine
// groups that allocated it (which raises their impact), keeps what scores
// at least minScore, and then sums the heap stacks into sites by
// allocating line and owner.
func judge(in *loaded, ev *evidence, minScore float64) *verdicts {
	v := &verdicts{}
	for _, x := range ev.candidates {
		x.sc = scoreSite(x, in.tsOf(x.s))
	}
	growing := growingStacks(ev.heap)
	held := heldStacks(in.prof.HeapTS, growing, samplingPeriod(in.prof.HeapTS, in.periods))
	owner := attributeHeap(ev.candidates, growing, held, in.src, minScore)
	for _, x := range ev.candidates {
		if x.retained > 0 {
			x.sc = scoreSite(x, in.tsOf(x.s))
		}
	}
	// A group that does not make the cut explains no heap growth.
	for h, x := range owner {
		if !reported(x.sc.score, minScore) {
			delete(owner, h)
		}
	}
	foldConsequences(ev.candidates, minScore)
	all := append([]*candidate(nil), ev.candidates...)
	sort.Slice(all, func(i, j int) bool {
		if all[i].sc.score != all[j].sc.score {
			return all[i].sc.score > all[j].sc.score
		}
		if all[i].sc.logit != all[j].sc.logit {
			return all[i].sc.logit > all[j].sc.logit
		}
		return siteCmp(all[i].s, all[j].s) < 0
	})
	for _, x := range all {
		switch {
		case reported(x.sc.score, minScore) && x.cause == nil && lastCount(x.s) > 0:
			// A group with no goroutine left at the last snapshot is
			// neither stuck nor leaking, whatever it did before.
			v.goroutines = append(v.goroutines, x)
		case lookAlike(x) != nil:
			v.lookAlikes = append(v.lookAlikes, x)
		}
	}
	sort.SliceStable(v.lookAlikes, func(i, j int) bool { return lastCount(v.lookAlikes[i].s) > lastCount(v.lookAlikes[j].s) })
	if len(v.lookAlikes) > maxLookAlikes {
		v.lookAlikes = v.lookAlikes[:maxLookAlikes]
	}
	v.all = heapSites(in.prof, ev.heap, owner, in.periods, in.src)
	for _, hs := range v.all {
		if !hs.growing() {
			continue
		}
		v.sites = append(v.sites, hs)
		if hs.owner != nil {
			hs.owner.growers = append(hs.owner.growers, hs)
		} else if reported(hs.score, minScore) && !stdOnly(hs.frames) {
			v.heap = append(v.heap, hs)
		}
	}
	v.sight = heapSight(in.prof.HeapTS, in.periods)
	return v
}

// foldConsequences puts each candidate whose stuck members only wait for
// another reported candidate's (a WaitGroup.Wait over stuck workers, a
// caller waiting for a stuck result) under that cause.
func foldConsequences(all []*candidate, minScore float64) {
	bySite := map[*site]*candidate{}
	for _, x := range all {
		bySite[x.s] = x
	}
	foldParents(all, minScore)
	foldMachinery(all, minScore)
	for _, x := range all {
		f := x.facts
		if f == nil || f.unreached+f.infraWaiting == 0 || x.sc.grows >= 0.5 {
			continue // a group that grows on its own is a leak of its own
		}
		var cause *candidate
		for s, c := range f.causes {
			y := bySite[s]
			if y == nil || 2*c < f.unreached+f.infraWaiting || !reported(y.sc.score, minScore) {
				continue
			}
			if cause == nil || y.sc.score > cause.sc.score || y.sc.score == cause.sc.score && siteCmp(s, cause.s) < 0 {
				cause = y
			}
		}
		for c := cause; c != nil; c = c.cause {
			if c == x {
				cause = nil // waiting for each other: a cycle, not a consequence
				break
			}
		}
		if cause == nil || !reported(cause.sc.score, minScore) {
			continue
		}
		x.cause = cause
		cause.consequences = append(cause.consequences, x)
	}
}

// maxLookAlikes bounds the look-alikes a report lists.
const maxLookAlikes = 10

// lookAlike returns the evidence that let a parked group go (an idle
// pool, something able to run holding what it waits on, a lock handed on
// between snapshots, progress the runtime's counters show), nil if none.
func lookAlike(x *candidate) *Evidence {
	for i, e := range x.sc.evidence {
		if (e.Kind == "idle-pool" || e.Kind == "contended" || e.Kind == "wakeable" && e.Weight <= wMention/2 || e.Kind == "progress" && e.Weight <= wSignalled/2 || e.Kind == "possible-holder" && e.Weight <= wPossible/2) && x.sc.conf < 0.5 {
			return &x.sc.evidence[i]
		}
	}
	return nil
}

// lastCount is a site's member count in its latest snapshot.
func lastCount(s *site) float64 {
	if n := len(s.counts); n > 0 {
		return s.counts[n-1]
	}
	return 0
}

// foldParents, for groups from profiles (no creators known), puts a
// group waiting in a WaitGroup or a receive under a reported group whose
// goroutines start in a closure of the function it waits in (the test
// waiting for the goroutines it started: TestX waits, TestX.func1 is
// stuck).
func foldParents(all []*candidate, minScore float64) {
	parents := newClosureParents(all, minScore)
	for _, x := range all {
		if !x.s.fromProfile || x.cause != nil || !reported(x.sc.score, minScore) {
			continue
		}
		switch x.s.state {
		case "sync.WaitGroup.Wait", "chan receive", "select", "semacquire":
		default:
			continue
		}
		if cause := parents.best(x.s.loc.Function, x); cause != nil {
			x.cause = cause
			cause.consequences = append(cause.consequences, x)
		}
	}
}

// foldMachinery puts machinery the runtime marked leaked (the test runner
// in testing.(*T).Run waiting for its test, which only the marks make a
// candidate when there is no wait-for graph: a goroutineleak profile
// alone) under the test goroutine's group, else the best program group.
func foldMachinery(all []*candidate, minScore float64) {
	var test, best *candidate
	for _, x := range all {
		if isInfraStack(x.s.frames) || !reported(x.sc.score, minScore) {
			continue
		}
		if best == nil || x.sc.score > best.sc.score {
			best = x
		}
		if containsFn(x.s.frames, "testing.tRunner") && (test == nil || x.sc.score > test.sc.score) {
			test = x
		}
	}
	if test != nil {
		best = test
	}
	for _, x := range all {
		if best != nil && x.cause == nil && isInfraStack(x.s.frames) && reported(x.sc.score, minScore) {
			x.cause = best
			best.consequences = append(best.consequences, x)
		}
	}
}

// reported reports whether a score makes the cut.
func reported(score, minScore float64) bool {
	return score >= minScore && score != 0
}

// attributeHeap gives each growing allocation stack a goroutine group
// holds (see heaphold.go) to the best-scoring such group, and records on
// each group what it retains. A stack that is not held stays with no
// group: its site is judged on its own.
func attributeHeap(all []*candidate, growing []*heapStack, held map[*heapStack]bool, src *sourceCode, minScore float64) map[*heapStack]*candidate {
	attributed := map[*heapStack]*candidate{}
	half := math.Max(minScore, 1) / 2
	owners := newHeldBy(all, half)
	for _, h := range growing {
		if !held[h] {
			continue
		}
		if x := owners.owner(h.frames, src); x != nil {
			attributed[h] = x
		}
	}
	// Goroutine structures allocated by the runtime alone (runtime.malg
	// under newproc1 on the system stack) belong to whichever group keeps
	// adding goroutines fastest.
	var fastest *candidate
	for _, x := range all {
		if x.sc.conf > 0 && x.sc.score >= half && (fastest == nil || x.sc.fit.Slope > fastest.sc.fit.Slope) {
			fastest = x
		}
	}
	for _, h := range growing {
		if held[h] && attributed[h] == nil && fastest != nil && runtimeOnly(h.funcs) && goroutineCreation(h.funcs) {
			attributed[h] = fastest
		}
	}
	for h, x := range attributed {
		x.retained += h.last()
	}
	return attributed
}

// stdOnly reports whether every frame of a stack is in the standard
// library (the runtime's own goroutine structures, a timer's goroutine in
// time.goFunc): no code the user owns or depends on to name as a heap
// suspect. Such sites stay in the heap growth table, and the runtime's
// goroutine structures go to the group that creates goroutines fastest.
func stdOnly(frames []Frame) bool {
	for _, f := range frames {
		if !isStd(f) {
			return false
		}
	}
	return true
}
