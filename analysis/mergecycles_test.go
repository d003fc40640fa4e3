package analysis

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// mergeCyclesPairwise is mergeCycles by its definition: every pair of
// groups compared, a joined group absorbing the first later group joined
// to it, again and again.
func mergeCyclesPairwise(sus []Suspect, groups [][]int) [][]int {
	inCycle := func(a, b Suspect) bool {
		return slices.Contains(a.Cycle, b.Location) || slices.Contains(b.Cycle, a.Location)
	}
	for i := 0; i < len(groups); i++ {
		for j := i + 1; j < len(groups); j++ {
			joined := false
			for _, a := range groups[i] {
				for _, b := range groups[j] {
					joined = joined || inCycle(sus[a], sus[b])
				}
			}
			if joined {
				groups[i] = append(groups[i], groups[j]...)
				groups = append(groups[:j], groups[j+1:]...)
				j = i
			}
		}
	}
	return groups
}

// TestMergeCyclesMatchesPairwise checks the indexed mergeCycles against
// the pairwise definition on random suspects, groups and cycles: the same
// groups, members in the same order.
func TestMergeCyclesMatchesPairwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 300; round++ {
		n, locs := 1+rng.IntN(40), 1+rng.IntN(30)
		sus := make([]Suspect, n)
		for i := range sus {
			sus[i].Location = fmt.Sprintf("f%d", rng.IntN(locs))
			if rng.IntN(4) == 0 {
				for range 1 + rng.IntN(3) {
					sus[i].Cycle = append(sus[i].Cycle, fmt.Sprintf("f%d", rng.IntN(locs)))
				}
			}
		}
		perm := rng.Perm(n)
		var groups [][]int
		for len(perm) > 0 {
			k := 1 + rng.IntN(min(3, len(perm)))
			groups = append(groups, slices.Clone(perm[:k]))
			perm = perm[k:]
		}
		clone := func() [][]int {
			out := make([][]int, len(groups))
			for i, g := range groups {
				out[i] = slices.Clone(g)
			}
			return out
		}
		want := mergeCyclesPairwise(sus, clone())
		got := mergeCycles(sus, clone())
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("round %d: mergeCycles %v, pairwise %v", round, got, want)
		}
	}
}
