package analysis

import (
	"cmp"
	"slices"
)

// The analysis's outputs must not depend on map iteration order or on
// scheduling: the same bundle gives the same report. Wherever a map is
// walked to build something whose order or first-wins fields matter,
// its keys are sorted first; every sort that can tie ends in siteCmp
// (or another total order).

// siteCmp is the total order sites fall back on when their scores tie:
// location, line, state, creator, then the representative stack.
func siteCmp(a, b *site) int {
	return cmp.Or(cmp.Compare(a.loc.Function, b.loc.Function), cmp.Compare(a.loc.Line, b.loc.Line),
		cmp.Compare(a.state, b.state), cmp.Compare(a.creator, b.creator), cmp.Compare(a.entry, b.entry),
		cmp.Compare(a.stackID, b.stackID))
}

// sortSites puts sites in siteCmp order.
func sortSites(s []*site) { slices.SortFunc(s, siteCmp) }

// sortedGroups returns the dump groups in a fixed order: stack, state,
// creator.
func sortedGroups(m map[groupKey]*rawGroup) []*rawGroup {
	keys := make([]groupKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b groupKey) int {
		return cmp.Or(cmp.Compare(a.stackID, b.stackID), cmp.Compare(a.state, b.state), cmp.Compare(a.creator, b.creator))
	})
	out := make([]*rawGroup, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}
