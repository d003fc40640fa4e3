package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/leakscope/leakscope/internal/format"
)

// Verdicts of a goroutine bar of a timeline ([Bar.Verdict]).
const (
	VerdictSuspect = "suspect" // a member of a leak suspect
	VerdictHealthy = "healthy" // alive at the end, in no suspect
	VerdictEnded   = "ended"   // ended within the capture
)

// groupBars sets each bar's Group and returns the groups: spans first
// (tasks, regions), then goroutine groups, each by count, largest first,
// then by label.
func groupBars(bars []Bar) []LifetimeGroup {
	type key struct{ kind, name, createdIn string }
	idx := map[key]int{}
	var groups []LifetimeGroup
	for i := range bars {
		b := &bars[i]
		k := key{b.Kind, b.Name, ""}
		if b.Name == "" {
			k.createdIn = b.CreatedIn
		}
		g, ok := idx[k]
		if !ok {
			g = len(groups)
			idx[k] = g
			groups = append(groups, LifetimeGroup{Kind: k.kind, Name: k.name, CreatedIn: k.createdIn, Label: groupLabel(k.kind, k.name, k.createdIn), Suspects: []string{}})
		}
		b.Group = g
		groups[g].Count++
		if b.End == nil {
			groups[g].Alive++
		}
	}
	order := map[string]int{"task": 0, "region": 1, "goroutine": 2}
	perm := make([]int, len(groups))
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int {
		x, y := groups[a], groups[b]
		if c := cmp.Compare(order[x.Kind], order[y.Kind]); c != 0 {
			return c
		}
		if c := cmp.Compare(y.Count, x.Count); c != 0 {
			return c
		}
		return cmp.Compare(x.Label, y.Label)
	})
	newIdx := make([]int, len(groups))
	sorted := make([]LifetimeGroup, len(groups))
	for n, old := range perm {
		newIdx[old] = n
		sorted[n] = groups[old]
	}
	for i := range bars {
		bars[i].Group = newIdx[bars[i].Group]
	}
	return sorted
}

// groupLabel names a group for people.
func groupLabel(kind, name, createdIn string) string {
	switch {
	case name != "":
		return name
	case kind != "goroutine":
		return "unnamed " + kind
	case createdIn != "":
		return "entry unknown · created in " + createdIn
	}
	return "entry unknown (seen without a stack)"
}

// MarkVerdicts gives every goroutine bar its verdict — a member of a
// suspect (members maps suspect ids to their member goids), else alive
// at the end (healthy) or ended — and counts the members per group.
func (v *LifetimeView) MarkVerdicts(members map[string][]int64) {
	of := map[int64]string{}
	ids := make([]string, 0, len(members))
	for id := range members {
		ids = append(ids, id)
	}
	slices.Sort(ids) // a goroutine in two suspects takes the first id
	for _, id := range slices.Backward(ids) {
		for _, g := range members[id] {
			of[g] = id
		}
	}
	for i := range v.Groups {
		v.Groups[i].Members, v.Groups[i].Suspects, v.Groups[i].AliveAtDump = 0, []string{}, nil
		if !v.AliveAt.IsZero() && v.Groups[i].Kind == "goroutine" {
			v.Groups[i].AliveAtDump = new(int)
		}
	}
	for i := range v.Bars {
		b := &v.Bars[i]
		if b.Kind != "goroutine" {
			continue
		}
		if b.Group < len(v.Groups) && v.Groups[b.Group].AliveAtDump != nil && v.alive[b.Goid] {
			*v.Groups[b.Group].AliveAtDump++
		}
		switch id := of[b.Goid]; {
		case id != "":
			b.Verdict, b.Suspect = VerdictSuspect, id
			if b.Group < len(v.Groups) {
				g := &v.Groups[b.Group]
				g.Members++
				if !slices.Contains(g.Suspects, id) {
					g.Suspects = append(g.Suspects, id)
				}
			}
		case b.End == nil:
			b.Verdict = VerdictHealthy
		default:
			b.Verdict = VerdictEnded
		}
	}
	for i := range v.Groups {
		g := &v.Groups[i]
		slices.Sort(g.Suspects)
		g.Summary = groupSummary(*g)
	}
}

// groupSummary words a group's counts.
func groupSummary(g LifetimeGroup) string {
	if g.Kind != "goroutine" {
		s := format.Count(float64(g.Count), g.Kind)
		if g.Alive > 0 {
			s += ", " + format.Int(int64(g.Alive)) + " open"
		}
		return s
	}
	s := format.Count(float64(g.Count), "goroutine") + ", " + format.Int(int64(g.Alive)) + " alive"
	if n := g.AliveAtDump; n != nil && *n != g.Alive {
		// Some began after the last dump (or it lists goroutines the
		// view's traces saw end): say both, as the toolbar counts at it.
		s = format.Count(float64(g.Count), "goroutine") + ", " + format.Int(int64(g.Alive)) + " alive at the end (" + format.Int(int64(*n)) + " at the last dump)"
	}
	if g.Members > 0 {
		s += ", " + format.Int(int64(g.Members)) + " in " + strings.Join(g.Suspects, ", ")
	}
	return s
}

// String is a group's label with its count, for logs and tests.
func (g LifetimeGroup) String() string { return fmt.Sprintf("%s (%d)", g.Label, g.Count) }
