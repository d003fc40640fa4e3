package analysis

import (
	"sort"
	"time"

	"github.com/leakscope/leakscope/ingest/schema"
)

// spanIndex finds the spans open on a goroutine at a time.
type spanIndex struct {
	byGoid map[int64][]*spanRec // sorted by start
	end    int64                // end of the data, for spans never ended
}

func newSpanIndex(spans []*spanRec, end int64) *spanIndex {
	ix := &spanIndex{byGoid: map[int64][]*spanRec{}, end: end}
	for _, s := range spans {
		if s.goid != 0 {
			ix.byGoid[s.goid] = append(ix.byGoid[s.goid], s)
		}
	}
	for _, l := range ix.byGoid {
		sort.Slice(l, func(i, j int) bool { return l[i].start < l[j].start })
	}
	return ix
}

// openAt returns the innermost span (latest start) open on goid at ts.
func (ix *spanIndex) openAt(goid, ts int64) *spanRec {
	var best *spanRec
	for _, s := range ix.byGoid[goid] {
		if s.start > ts {
			break
		}
		if s.end == 0 || s.end >= ts {
			if best == nil || s.start >= best.start {
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
func summariseSpans(spans []*spanRec, ix *spanIndex, tg map[int64]*traceG) SpanSummary {
	var s SpanSummary
	s.NeverEnded = []SpanRef{}
	s.Outliving = []Outliving{}
	for _, sp := range spans {
		switch sp.kind {
		case schema.SpanTask:
			s.Tasks++
		case schema.SpanRegion:
			s.Regions++
		}
		if sp.end == 0 && len(s.NeverEnded) < maxOutliving {
			s.NeverEnded = append(s.NeverEnded, spanRef(sp))
		}
	}
	type key struct{ span, fn string }
	groups := map[key]*Outliving{}
	for goid, g := range tg {
		if g.created == 0 || g.parent == 0 {
			continue
		}
		sp := ix.openAt(g.parent, g.created)
		if sp == nil || sp.end == 0 {
			continue
		}
		if g.ended != 0 && g.ended <= sp.end {
			continue
		}
		k := key{sp.name, g.startFn}
		o := groups[k]
		if o == nil {
			o = &Outliving{Span: sp.name, Function: g.startFn}
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

func spanRef(sp *spanRec) SpanRef {
	r := SpanRef{ID: sp.id, Kind: sp.kind, Name: sp.name, Goid: sp.goid, Start: tsTime(sp.start)}
	if sp.end != 0 {
		r.End = tsTime(sp.end)
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
