package analysis

import (
	"sort"
	"time"

	"github.com/leakscope/leakscope/analysis/internal/tables"
	"github.com/leakscope/leakscope/ingest/schema"
)

// spanIndex finds the spans open on a goroutine at a time.
type spanIndex struct {
	byGoid map[int64][]*tables.SpanRec // sorted by start
	end    int64                       // end of the data, for spans never ended
}

func newSpanIndex(spans []*tables.SpanRec, end int64) *spanIndex {
	ix := &spanIndex{byGoid: map[int64][]*tables.SpanRec{}, end: end}
	for _, s := range spans {
		if s.Goid != 0 {
			ix.byGoid[s.Goid] = append(ix.byGoid[s.Goid], s)
		}
	}
	for _, l := range ix.byGoid {
		sort.Slice(l, func(i, j int) bool { return l[i].Start < l[j].Start })
	}
	return ix
}

// openAt returns the innermost span (latest start) open on goid at ts.
func (ix *spanIndex) openAt(goid, ts int64) *tables.SpanRec {
	var best *tables.SpanRec
	for _, s := range ix.byGoid[goid] {
		if s.Start > ts {
			break
		}
		if s.End == 0 || s.End >= ts {
			if best == nil || s.Start >= best.Start {
				best = s
			}
		}
	}
	return best
}

// maxOutliving bounds the outliving groups and the never-ended spans a
// report lists.
const maxOutliving = 50

// summariseSpans counts tasks and regions, lists spans never ended, and
// finds goroutines that outlived the span open on their creator when they
// were created.
func summariseSpans(spans []*tables.SpanRec, ix *spanIndex, tg map[int64]*tables.TraceG) SpanSummary {
	var s SpanSummary
	s.NeverEnded = []SpanRef{}
	s.Outliving = []Outliving{}
	for _, sp := range spans {
		switch sp.Kind {
		case schema.SpanTask:
			s.Tasks++
		case schema.SpanRegion:
			s.Regions++
		}
		if sp.End == 0 && len(s.NeverEnded) < maxOutliving {
			s.NeverEnded = append(s.NeverEnded, spanRef(sp))
		}
	}
	type key struct{ span, fn string }
	groups := map[key]*Outliving{}
	for goid, g := range tg {
		if g.Created == 0 || g.Parent == 0 {
			continue
		}
		sp := ix.openAt(g.Parent, g.Created)
		if sp == nil || sp.End == 0 {
			continue
		}
		if g.Ended != 0 && g.Ended <= sp.End {
			continue
		}
		k := key{sp.Name, g.StartFn}
		o := groups[k]
		if o == nil {
			o = &Outliving{Span: sp.Name, Function: g.StartFn}
			groups[k] = o
		}
		o.Count++
		o.Goids = append(o.Goids, goid)
	}
	for _, o := range groups {
		// The sample is the lowest goids, whatever order the map gave
		// them in: the same bundle gives the same report.
		sort.Slice(o.Goids, func(i, j int) bool { return o.Goids[i] < o.Goids[j] })
		o.Goids = o.Goids[:min(len(o.Goids), 20)]
		s.Outliving = append(s.Outliving, *o)
	}
	sort.Slice(s.Outliving, func(i, j int) bool {
		a, b := s.Outliving[i], s.Outliving[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Span+a.Function < b.Span+b.Function
	})
	if len(s.Outliving) > maxOutliving {
		s.Outliving = s.Outliving[:maxOutliving]
	}
	sort.Slice(s.NeverEnded, func(i, j int) bool { return s.NeverEnded[i].Start.Before(s.NeverEnded[j].Start) })
	return s
}

func spanRef(sp *tables.SpanRec) SpanRef {
	r := SpanRef{ID: sp.ID, Kind: sp.Kind, Name: sp.Name, Goid: sp.Goid, Start: tsTime(sp.Start)}
	if sp.End != 0 {
		r.End = tsTime(sp.End)
	}
	return r
}

// tsTime converts Unix nanoseconds to UTC time; 0 stays the zero time.
func tsTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}
