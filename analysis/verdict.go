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
	// heap are growing allocation sites reported as suspects of their
	// own (no goroutine group explains them), largest growth first.
	heap []*heapSite
	// growers are every growing allocation site, largest growth first;
	// attributed maps those a reported goroutine group explains to it.
	growers    []*heapSite
	attributed map[*heapSite]*candidate
}

// judge scores every candidate, attributes heap growth to the goroutine
// groups that allocated it (which raises their impact), and keeps what
// scores at least minScore.
func judge(in *loaded, ev *evidence, minScore float64) *verdicts {
	v := &verdicts{growers: ev.growers}
	for _, x := range ev.candidates {
		x.sc = scoreSite(x.s, in.ts, x.rule, 0, x.leakHit, x.trace)
	}
	v.attributed = attributeHeap(ev.candidates, ev.growers, minScore)
	for _, x := range ev.candidates {
		if x.retained > 0 {
			x.sc = scoreSite(x.s, in.ts, x.rule, x.retained, x.leakHit, x.trace)
		}
	}
	// A group that does not make the cut explains no heap growth.
	for h, x := range v.attributed {
		if !reported(x.sc.score, minScore) {
			delete(v.attributed, h)
			x.growers = nil
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
	for _, h := range ev.growers {
		if v.attributed[h] == nil && reported(h.score, minScore) && !runtimeOnly(h.funcs) {
			v.heap = append(v.heap, h)
		}
	}
	return v
}

// reported reports whether a score makes the cut.
func reported(score, minScore float64) bool {
	return score >= minScore && score != 0
}

// attributeHeap gives each growing allocation site to the best-scoring
// goroutine group that allocated it, and records on each group what it
// retains.
func attributeHeap(all []*candidate, growers []*heapSite, minScore float64) map[*heapSite]*candidate {
	attributed := map[*heapSite]*candidate{}
	half := math.Max(minScore, 1) / 2
	for _, h := range growers {
		for _, x := range all {
			if x.sc.conf == 0 || x.sc.score < half || !allocatedBy(h.grower.Stack, x.s) {
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
	for _, h := range growers {
		if attributed[h] == nil && fastest != nil && runtimeOnly(h.funcs) && goroutineCreation(h.funcs) {
			attributed[h] = fastest
		}
	}
	for h, x := range attributed {
		x.growers = append(x.growers, h)
		x.retained += h.grower.InuseBytes
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
