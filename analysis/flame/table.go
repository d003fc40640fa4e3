package flame

import (
	"cmp"
	"fmt"
	"slices"
)

// Table sort orders of [TopTable].
const (
	SortFlat = "flat"
	SortCum  = "cum"
	SortName = "name"
)

// TopTable is pprof's -top of a tree: flat and cum per function, each
// with its share of the tree's PercentOf (as pprof prints flat% and cum%).
type TopTable struct {
	Profile    string `json:"profile"`
	SampleType string `json:"sample_type"`
	Unit       string `json:"unit"`
	// Total is the tree's total; PercentOf what the shares are of.
	Total     int64    `json:"total"`
	PercentOf int64    `json:"percent_of"`
	Sort      string   `json:"sort"`
	Rows      []TopRow `json:"rows"`
}

// TopRow is one function of a [TopTable].
type TopRow struct {
	Function string  `json:"function"`
	File     string  `json:"file,omitempty"`
	Flat     int64   `json:"flat"`
	FlatPct  float64 `json:"flat_pct"`
	Cum      int64   `json:"cum"`
	CumPct   float64 `json:"cum_pct"`
	// Own marks the capture's own machinery ([Own]).
	Own bool `json:"own,omitempty"`
}

// NewTopTable returns the top table of t sorted by sortBy ([SortFlat], the
// default, [SortCum] or [SortName]; flat and cum compare by size, largest
// first, as pprof's -top and -top -cum list them).
func NewTopTable(t *Tree, sortBy string) (*TopTable, error) {
	if sortBy == "" {
		sortBy = SortFlat
	}
	if sortBy != SortFlat && sortBy != SortCum && sortBy != SortName {
		return nil, fmt.Errorf("unknown sort %q (want %s, %s or %s)", sortBy, SortFlat, SortCum, SortName)
	}
	stats := Top(t)
	out := &TopTable{Profile: t.Profile, SampleType: t.Value, Unit: t.Unit, Total: t.Total(), PercentOf: t.PercentOf, Sort: sortBy, Rows: make([]TopRow, 0, len(stats))}
	for _, f := range stats {
		out.Rows = append(out.Rows, TopRow{Function: f.Name, File: f.File, Flat: f.Flat, FlatPct: percent(f.Flat, t.PercentOf), Cum: f.Cum, CumPct: percent(f.Cum, t.PercentOf), Own: Own(f.Name)})
	}
	switch sortBy {
	case SortCum:
		slices.SortStableFunc(out.Rows, func(a, b TopRow) int {
			if c := cmp.Compare(abs(b.Cum), abs(a.Cum)); c != 0 {
				return c
			}
			return cmp.Compare(a.Function, b.Function)
		})
	case SortName:
		slices.SortStableFunc(out.Rows, func(a, b TopRow) int { return cmp.Compare(a.Function, b.Function) })
	}
	return out, nil
}

// percent is 100·v/of, 0 when of is 0.
func percent(v, of int64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(v) / float64(of)
}

// PeekTable is pprof's -peek for one function: its flat and cum, and the
// weight of each call edge into it (callers) and out of it (callees), with
// each edge's share of the function's cum.
type PeekTable struct {
	Function   string `json:"function"`
	File       string `json:"file,omitempty"`
	Profile    string `json:"profile"`
	SampleType string `json:"sample_type"`
	Unit       string `json:"unit"`
	Flat       int64  `json:"flat"`
	Cum        int64  `json:"cum"`
	// FlatPct and CumPct are shares of PercentOf, as in [TopTable].
	FlatPct   float64 `json:"flat_pct"`
	CumPct    float64 `json:"cum_pct"`
	PercentOf int64   `json:"percent_of"`
	Callers   []Edge  `json:"callers"`
	Callees   []Edge  `json:"callees"`
}

// Edge is one call edge of a [PeekTable]: the function at its other end
// and the value of the stacks that hold it (each stack counted once).
type Edge struct {
	Function string `json:"function"`
	Value    int64  `json:"value"`
	// Pct is Value's share of the peeked function's cum.
	Pct float64 `json:"pct"`
}

// Peek returns the peek table of function (exact name) in t, which must
// be built without Invert. Edges follow pprof's graph: a stack adds its
// value to each distinct edge it holds once, a function calling itself
// makes no edge, and edges are sorted by size, largest first.
func Peek(t *Tree, function string) (*PeekTable, error) {
	if t.Inverted {
		return nil, fmt.Errorf("peek of %s: needs a tree built without invert", function)
	}
	p := &PeekTable{Function: function, Profile: t.Profile, SampleType: t.Value, Unit: t.Unit, PercentOf: t.PercentOf}
	callers, callees := map[string]int64{}, map[string]int64{}
	onPath := map[string]int{}
	onEdge := map[[2]string]int{}
	found := false
	var walk func(n *Node, parent string)
	walk = func(n *Node, parent string) {
		e := [2]string{parent, n.Name}
		if n.Name == function {
			found = true
			if p.File == "" {
				p.File = n.File
			}
			p.Flat += n.Self
			if onPath[function] == 0 {
				p.Cum += n.Total
			}
		}
		if parent != "" && parent != n.Name && onEdge[e] == 0 {
			switch function {
			case n.Name:
				callers[parent] += n.Total
			case parent:
				callees[n.Name] += n.Total
			}
		}
		onPath[n.Name]++
		onEdge[e]++
		for _, c := range n.Children {
			walk(c, n.Name)
		}
		onPath[n.Name]--
		onEdge[e]--
	}
	for _, c := range t.Root.Children {
		walk(c, "")
	}
	if !found {
		return nil, fmt.Errorf("peek of %s: %w", function, ErrNoFunction)
	}
	p.FlatPct, p.CumPct = percent(p.Flat, t.PercentOf), percent(p.Cum, t.PercentOf)
	p.Callers, p.Callees = edges(callers, p.Cum), edges(callees, p.Cum)
	return p, nil
}

func edges(m map[string]int64, cum int64) []Edge {
	out := make([]Edge, 0, len(m))
	for fn, v := range m {
		out = append(out, Edge{Function: fn, Value: v, Pct: percent(v, cum)})
	}
	slices.SortFunc(out, func(a, b Edge) int {
		if c := cmp.Compare(abs(b.Value), abs(a.Value)); c != 0 {
			return c
		}
		return cmp.Compare(a.Function, b.Function)
	})
	return out
}
