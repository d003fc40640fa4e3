package flame

import (
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// LineTable is pprof's -list for one function: flat and cum per source
// line, from the frames' own lines (so inlined calls count at the line of
// their call), for the stacks q selects.
type LineTable struct {
	Function   string `json:"function"`
	File       string `json:"file,omitempty"`
	Profile    string `json:"profile"`
	SampleType string `json:"sample_type"`
	Unit       string `json:"unit"`
	Snapshot   int64  `json:"snapshot"`
	Base       int64  `json:"base"`
	// Flat and Cum are the function's, as [Top] has them; the shares are
	// of PercentOf, as in [TopTable].
	Flat      int64     `json:"flat"`
	Cum       int64     `json:"cum"`
	FlatPct   float64   `json:"flat_pct"`
	CumPct    float64   `json:"cum_pct"`
	PercentOf int64     `json:"percent_of"`
	Rows      []LineRow `json:"rows"` // by line
	// Text, SourceStatus and SourceDetail are the function's source as
	// the bundle kept it ([LineTable.AttachSource]).
	Text         []SourceLine `json:"text,omitempty"`
	SourceStatus string       `json:"source_status,omitempty"`
	SourceDetail string       `json:"source_detail,omitempty"`
}

// LineRow is one source line with a value: Flat counts stacks whose
// innermost frame is this line, Cum stacks with a frame at this line, each
// stack once (pprof's -list columns).
type LineRow struct {
	Line int64 `json:"line"`
	Flat int64 `json:"flat"`
	Cum  int64 `json:"cum"`
}

// Lines returns the line table of function (exact name) for the stacks q
// selects (Invert is ignored: lines are the same either way). The error
// wraps [ErrNoFunction] when no selected stack holds the function.
func (s *Stacks) Lines(b *bundle.Bundle, mem memory.Allocator, q Query, function string) (*LineTable, error) {
	q.Invert = false
	t, n, nv, bv, err := s.selectValues(b, mem, q)
	if err != nil {
		return nil, err
	}
	fi := int32(-1)
	for i, name := range s.funcs {
		if name == function {
			fi = int32(i)
			break
		}
	}
	out := &LineTable{Function: function, Profile: t.Profile, SampleType: t.Value, Unit: t.Unit, Snapshot: t.Snapshot, Base: t.Base, PercentOf: percentOf(nv, bv, t.Diff())}
	if fi < 0 {
		return nil, fmt.Errorf("lines of %s: %w", function, ErrNoFunction)
	}
	out.File = s.funcFiles[fi]
	focus, ignore := s.matchFuncs(n.focus), s.matchFuncs(n.ignore)
	flat, cum := map[int64]int64{}, map[int64]int64{}
	found := false
	var seen []int64
	for id := 0; id < max(len(nv), len(bv)); id++ {
		d := at(nv, id) - at(bv, id)
		frames, known := s.frames(int64(id))
		if !known || (d == 0 && at(bv, id) == 0) || !keep(frames, s.fn, focus, ignore) || (n.HideOwn && s.ownStack(frames)) {
			continue
		}
		seen = seen[:0]
		for k, f := range frames {
			if s.fn(f) != fi {
				continue
			}
			found = true
			line := s.frameLine[f]
			if k == 0 {
				flat[line] += d
				out.Flat += d
			}
			if len(seen) == 0 {
				out.Cum += d
			}
			if !slices.Contains(seen, line) {
				seen = append(seen, line)
				cum[line] += d
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("lines of %s: %w", function, ErrNoFunction)
	}
	for line, c := range cum {
		out.Rows = append(out.Rows, LineRow{Line: line, Flat: flat[line], Cum: c})
	}
	slices.SortFunc(out.Rows, func(a, b LineRow) int { return int(a.Line - b.Line) })
	out.FlatPct, out.CumPct = percent(out.Flat, out.PercentOf), percent(out.Cum, out.PercentOf)
	return out, nil
}

// at returns v[i], 0 past its end.
func at(v []int64, i int) int64 {
	if i < len(v) {
		return v[i]
	}
	return 0
}
