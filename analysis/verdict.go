package analysis

import (
	"math"
	"sort"
	"strings"
)

// verdicts is the third stage's result: what is reported and how sure.
type verdicts struct {
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
}

// judge scores every candidate, attributes heap growth to the goroutine
// groups that allocated it (which raises their impact), keeps what scores
// at least minScore, and then sums the heap stacks into sites by
// allocating line and owner.
func judge(in *loaded, ev *evidence, minScore float64) *verdicts {
	v := &verdicts{}
	for _, x := range ev.candidates {
		x.sc = scoreSite(x.s, in.ts, x.rule, 0, x.leakHit, x.trace)
	}
	owner := attributeHeap(ev.candidates, growingStacks(ev.heap), minScore)
	for _, x := range ev.candidates {
		if x.retained > 0 {
			x.sc = scoreSite(x.s, in.ts, x.rule, x.retained, x.leakHit, x.trace)
		}
	}
	// A group that does not make the cut explains no heap growth.
	for h, x := range owner {
		if !reported(x.sc.score, minScore) {
			delete(owner, h)
		}
	}
	all := append([]*candidate(nil), ev.candidates...)
	sort.Slice(all, func(i, j int) bool {
		if all[i].sc.score != all[j].sc.score {
			return all[i].sc.score > all[j].sc.score
		}
		return all[i].s.loc.Function < all[j].s.loc.Function
	})
	for _, x := range all {
		if reported(x.sc.score, minScore) {
			v.goroutines = append(v.goroutines, x)
		}
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
	return v
}

// reported reports whether a score makes the cut.
func reported(score, minScore float64) bool {
	return score >= minScore && score != 0
}

// attributeHeap gives each growing allocation stack to the best-scoring
// goroutine group that allocated it, and records on each group what it
// retains.
func attributeHeap(all []*candidate, growing []*heapStack, minScore float64) map[*heapStack]*candidate {
	attributed := map[*heapStack]*candidate{}
	half := math.Max(minScore, 1) / 2
	for _, h := range growing {
		for _, x := range all {
			if x.sc.conf == 0 || x.sc.score < half || !allocatedBy(h.frames, x.s) {
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
	var fastest *candidate
	for _, x := range all {
		if x.sc.conf > 0 && x.sc.score >= half && (fastest == nil || x.sc.fit.Slope > fastest.sc.fit.Slope) {
			fastest = x
		}
	}
	for _, h := range growing {
		if attributed[h] == nil && fastest != nil && runtimeOnly(h.funcs) && goroutineCreation(h.funcs) {
			attributed[h] = fastest
		}
	}
	for h, x := range attributed {
		x.retained += h.last()
	}
	return attributed
}

// allocatedBy reports whether an allocation stack belongs to a goroutine
// group: it runs through the group's own location or entry function, or
// its first frame outside the standard library is the creator, or it is the
// group's goroutines being created (g structures allocated under
// runtime.newproc1 from the creator).
func allocatedBy(alloc []Frame, s *site) bool {
	first := true
	for _, f := range alloc {
		if isStd(f) {
			continue
		}
		fn := f.Function
		// The group's own code, or its creator itself (not a callee)
		// setting up what the new goroutines hold: channels, buffers,
		// closures.
		if fn == s.loc.Function || fn == s.entry || first && fn == s.creator {
			return true
		}
		first = false
	}
	hasNewproc := false
	for _, f := range alloc {
		fn := f.Function
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
