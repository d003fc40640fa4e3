package analysis

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/leakscope/leakscope/ingest/schema"
	"github.com/leakscope/leakscope/internal/gosym"
)

// The verdict stage's indexes must pick what trying every candidate in
// turn picked: these tests compare them with that, written out, on
// random candidates over a few names (so that names, scores and causes
// collide).

// allocatedByEach is the pairwise rule [heldBy.owner] indexes.
func allocatedByEach(alloc []Frame, s *site, src *sourceCode) bool {
	first := true
	for _, f := range alloc {
		if isStd(f) {
			continue
		}
		fn := f.Function
		if fn == s.loc.Function || fn == s.entry || first && fn == s.creator && src.handedToGoroutine(f) {
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

var indexNames = []string{"", "main.a", "main.b", "main.a.func1", "main.a.func1.2", "main.b.func2", "main.mk",
	"sync.(*WaitGroup).Wait", "runtime.newproc1", "runtime.malg", "main.a.func1.func3"}

func randomCandidates(r *rand.Rand, n int) []*candidate {
	states := []string{"chan receive", "select", "sync.WaitGroup.Wait", "chan send", "semacquire"}
	pick := func() string { return indexNames[r.Intn(len(indexNames))] }
	all := make([]*candidate, n)
	for i := range all {
		s := &site{state: states[r.Intn(len(states))], loc: Frame{Function: pick(), File: "f.go"}, entry: pick(), creator: pick(), fromProfile: r.Intn(4) > 0}
		all[i] = &candidate{s: s, sc: siteScore{score: float64(r.Intn(4) * 20), conf: float64(r.Intn(3)) / 2}}
	}
	return all
}

// TestHeldByMatchesPairwise: the heap owner found through the index is
// the one the pairwise rule finds, the best score first and the earlier
// candidate on a tie.
func TestHeldByMatchesPairwise(t *testing.T) {
	lines := []string{"func mk() {", "	ch := make(chan int)", "	go func() { ch <- 1 }()", "}"}
	src := &sourceCode{funcs: map[[2]string]*funcSource{{"f.go", "main.mk"}: {start: 1, end: 4, lines: lines, status: schema.SourceOK}}}
	r := rand.New(rand.NewSource(1))
	for round := 0; round < 300; round++ {
		all := randomCandidates(r, 1+r.Intn(12))
		half := float64(r.Intn(3) * 10)
		idx := newHeldBy(all, half)
		for k := 0; k < 10; k++ {
			alloc := make([]Frame, 1+r.Intn(5))
			for i := range alloc {
				alloc[i] = Frame{Function: indexNames[1+r.Intn(len(indexNames)-1)], File: "f.go", Line: 1 + r.Intn(3)}
			}
			var want *candidate
			for _, x := range all {
				if x.sc.conf == 0 || x.sc.score < half || !allocatedByEach(alloc, x.s, src) {
					continue
				}
				if want == nil || x.sc.score > want.sc.score {
					want = x
				}
			}
			if got := idx.owner(alloc, src); got != want {
				t.Fatalf("round %d: owner of %v = %v, want %v", round, alloc, got, want)
			}
		}
	}
}

// foldParentsEach is the pairwise fold [closureParents] indexes.
func foldParentsEach(all []*candidate, minScore float64) {
	for _, x := range all {
		if !x.s.fromProfile || x.cause != nil || !reported(x.sc.score, minScore) {
			continue
		}
		switch x.s.state {
		case "sync.WaitGroup.Wait", "chan receive", "select", "semacquire":
		default:
			continue
		}
		var cause *candidate
		for _, y := range all {
			if y != x && y.cause == nil && reported(y.sc.score, minScore) && slices.Contains(gosym.Enclosing(y.s.entry), x.s.loc.Function) &&
				(cause == nil || y.sc.score > cause.sc.score) {
				cause = y
			}
		}
		if cause != nil {
			x.cause = cause
			cause.consequences = append(cause.consequences, x)
		}
	}
}

// TestFoldParentsMatchesPairwise: folding through the index gives every
// candidate the cause the pairwise fold gives it.
func TestFoldParentsMatchesPairwise(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for round := 0; round < 500; round++ {
		seed := r.Int63()
		n := 1 + r.Intn(15)
		got := randomCandidates(rand.New(rand.NewSource(seed)), n)
		want := randomCandidates(rand.New(rand.NewSource(seed)), n)
		foldParents(got, 20)
		foldParentsEach(want, 20)
		pos := map[*candidate]int{}
		for i, x := range got {
			pos[x] = i
		}
		for i := range want {
			g, w := got[i].cause, want[i].cause
			if (g == nil) != (w == nil) || g != nil && pos[g] != indexOf(want, w) {
				t.Fatalf("round %d: candidate %d (%s in %s) folded under %v, want %v", round, i, got[i].s.state, got[i].s.loc.Function, g, w)
			}
		}
	}
}

func indexOf(all []*candidate, x *candidate) int {
	for i, y := range all {
		if y == x {
			return i
		}
	}
	return -1
}
