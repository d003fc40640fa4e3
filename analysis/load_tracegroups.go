package analysis

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/leakscope/leakscope/analysis/internal/tables"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// traceGroup counts trace goroutines of one creator and start function.
type traceGroup struct {
	alive, ended          int64
	firstAlive, lastAlive int64 // creation times of alive members
	created               []int64
	state                 string
	lastStack             int64
}

type traceKey struct{ creator, start string }

// traceGroups groups trace goroutines by creator and start function.
func traceGroups(tg map[int64]*tables.TraceG, st *stackTable) map[traceKey]*traceGroup {
	out := map[traceKey]*traceGroup{}
	creators := map[int64]string{}
	for _, g := range tg {
		c, ok := creators[g.CreationStack]
		if !ok {
			if fr := st.framesOf(g.CreationStack); len(fr) > 0 {
				c = creatorOfCreationStack(fr)
			}
			creators[g.CreationStack] = c
		}
		k := traceKey{c, g.StartFn}
		t := out[k]
		if t == nil {
			t = &traceGroup{}
			out[k] = t
		}
		if g.Ended != 0 {
			t.ended++
			continue
		}
		t.alive++
		if t.state == "" {
			t.state, t.lastStack = traceState(g.LastReason, g.LastState), g.LastStack
		}
		if g.Created != 0 {
			if t.firstAlive == 0 || g.Created < t.firstAlive {
				t.firstAlive = g.Created
			}
			t.lastAlive = max(t.lastAlive, g.Created)
			if len(t.created) < 100000 {
				t.created = append(t.created, g.Created)
			}
		}
	}
	return out
}

// traceState maps a trace's blocking reason to the wait reason a
// goroutine dump would show, so the same rules apply.
func traceState(reason, state string) string {
	switch r := strings.ToLower(reason); {
	case r == "network":
		return "IO wait"
	case r == "sync" || strings.HasPrefix(r, "sync.(*mutex)") || strings.HasPrefix(r, "sync.(*rwmutex)"):
		return "semacquire"
	case strings.Contains(r, "cond"):
		return "sync.Cond.Wait"
	case strings.Contains(r, "waitgroup"):
		return "sync.WaitGroup.Wait"
	case r == "forever":
		return "select (no cases)"
	case r == "":
		if state == "running" || state == "runnable" {
			return state
		}
		return "unknown"
	}
	return reason
}

// evidence describes a trace group for a suspect. The creation rate
// counts the alive members created inside the trace windows over the time
// those windows cover while the group existed (from its first creation
// seen), not over the span from the first creation to the last, which
// also holds the gaps between windows where no creation could be seen.
func (t *traceGroup) evidence(windows []window) Evidence {
	d := fmt.Sprintf("%d created during the windows are still alive, %d ended", t.alive, t.ended)
	if n, covered, used := t.createdIn(windows); n > 1 && covered > 0 {
		d += fmt.Sprintf("; alive ones were created at %s over the %s the %d trace windows cover", perMinute(float64(n-1)/(float64(covered)/60e9)), time.Duration(covered).Round(time.Millisecond), used)
	}
	return Evidence{Kind: "trace", Detail: d, Value: float64(t.alive)}
}

// createdIn counts the alive members created inside the windows, the time
// the windows cover from the first of those creations on, and how many
// windows that time spans. n-1 creations follow the first within it.
func (t *traceGroup) createdIn(windows []window) (n int, covered int64, used int) {
	var first int64
	for _, c := range t.created {
		for _, w := range windows {
			if c >= w.start && c <= w.end {
				n++
				if first == 0 || c < first {
					first = c
				}
				break
			}
		}
	}
	for _, w := range windows {
		if w.end < first {
			continue
		}
		covered += w.end - max(w.start, first)
		used++
	}
	return n, covered, used
}

// window is the time one trace covers.
type window struct{ start, end int64 }

// traceWindows returns the time each trace of the bundle covers: from the
// manifest's trace artifacts (their first and last event, or for older
// bundles the request time and the capture's window setting), else one
// window spanning every creation the traces saw.
func traceWindows(m bundle.Manifest, tg map[int64]*tables.TraceG) []window {
	var setting time.Duration
	for _, s := range m.Sources {
		if s.Kind == bundle.SourceTrace {
			setting, _ = time.ParseDuration(s.Settings["window"])
		}
	}
	var out []window
	for _, a := range m.Artifacts {
		switch {
		case a.Kind != bundle.SourceTrace || a.Status == bundle.StatusFailed:
		case !a.Start.IsZero() && a.End.After(a.Start):
			out = append(out, window{a.Start.UnixNano(), a.End.UnixNano()})
		case setting > 0:
			out = append(out, window{a.Time.UnixNano(), a.Time.Add(setting).UnixNano()})
		}
	}
	if len(out) > 0 {
		return out
	}
	var lo, hi int64
	for _, g := range tg {
		if g.Created == 0 {
			continue
		}
		if lo == 0 || g.Created < lo {
			lo = g.Created
		}
		hi = max(hi, g.Created)
	}
	if hi > lo {
		out = append(out, window{lo, hi})
	}
	return out
}

// sitesFromTrace builds sites from goroutines alive at the end of the
// trace, for bundles with neither dumps nor goroutine profiles. Counts are
// cumulative creations of the alive members over ten steps of the trace.
func sitesFromTrace(groups map[traceKey]*traceGroup, st *stackTable) ([]*site, []int64) {
	var lo, hi int64
	for _, t := range groups {
		if t.alive == 0 || t.firstAlive == 0 {
			continue
		}
		if lo == 0 || t.firstAlive < lo {
			lo = t.firstAlive
		}
		hi = max(hi, t.lastAlive)
	}
	if lo == 0 || hi <= lo {
		return nil, nil
	}
	const steps = 10
	ts := make([]int64, steps)
	for i := range ts {
		ts[i] = lo + (hi-lo)*int64(i+1)/steps
	}
	var out []*site
	for k, t := range groups {
		if t.alive == 0 {
			continue
		}
		frames := st.framesOf(t.lastStack)
		loc, _ := locationFrame(frames)
		s := &site{state: t.state, rawState: t.state, loc: loc, creator: k.creator, frames: frames,
			stackID: t.lastStack, entry: k.start, counts: make([]float64, steps), creatorGoids: map[int64]int64{}}
		sort.Slice(t.created, func(i, j int) bool { return t.created[i] < t.created[j] })
		j := 0
		for i, at := range ts {
			for j < len(t.created) && t.created[j] <= at {
				j++
			}
			s.counts[i] = float64(j)
		}
		// Survival: the share of this kind of goroutine that never ended
		// during the trace (a leak's members never leave).
		s.survived, s.prevCount = t.alive, t.alive+t.ended
		out = append(out, s)
	}
	sortSites(out)
	return out, ts
}

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
