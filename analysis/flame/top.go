package flame

import (
	"cmp"
	"slices"
)

// FuncStat is pprof's per-function summary of a tree.
type FuncStat struct {
	Name, File string
	// Flat is the value of the stacks whose leaf is the function; Cum the
	// value of the stacks that hold the function, each counted once even
	// when the function recurses (pprof's -top semantics).
	Flat, Cum int64
}

// Top returns the flat and cum value of every function of t, sorted by
// flat, then cum (both in absolute value, largest first), then name. It
// works on inverted trees too.
func Top(t *Tree) []FuncStat {
	idx := map[string]int{}
	var out []FuncStat
	stat := func(n *Node) *FuncStat {
		i, ok := idx[n.Name]
		if !ok {
			i = len(out)
			idx[n.Name] = i
			out = append(out, FuncStat{Name: n.Name, File: n.File})
		}
		return &out[i]
	}
	onPath := map[string]int{}
	var walk func(n *Node, depth int)
	walk = func(n *Node, depth int) {
		if depth > 0 {
			st := stat(n)
			if t.Inverted {
				if depth == 1 {
					st.Flat += n.Total
				}
			} else {
				st.Flat += n.Self
			}
			if onPath[n.Name] == 0 {
				st.Cum += n.Total
			}
			onPath[n.Name]++
		}
		for _, c := range n.Children {
			walk(c, depth+1)
		}
		if depth > 0 {
			onPath[n.Name]--
		}
	}
	walk(t.Root, 0)
	slices.SortFunc(out, func(a, b FuncStat) int {
		if c := cmp.Compare(abs(b.Flat), abs(a.Flat)); c != 0 {
			return c
		}
		if c := cmp.Compare(abs(b.Cum), abs(a.Cum)); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out
}
