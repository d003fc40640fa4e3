package analysis

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis/internal/tables"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// maxSeriesPoints bounds each metric series a report carries.
const maxSeriesPoints = 2000

// readMetrics returns the metric series the report charts, by name, sorted
// by time and downsampled, and the windows they were sampled in: the span
// of each source's points (a trace window's live heap and GC cycles have
// no points outside it, so a chart must not join two windows).
func readMetrics(b *bundle.Bundle, mem memory.Allocator) (map[string][]Point, []Window, error) {
	want := map[string]bool{schema.MetricHeapLive: true, schema.MetricGoroutines: true, schema.MetricGCCycle: true, schema.MetricHeapGoal: true}
	raw := map[string][][2]float64{}
	spans := map[string]*[2]int64{}
	err := tables.ReadMetrics(b, mem, func(m schema.Metric) {
		n := m.Name
		if !want[n] {
			return
		}
		if n == schema.MetricHeapLive || n == schema.MetricGCCycle {
			widen(spans, m.Source, m.TS)
		}
		key := n
		for k := range want {
			if k == n {
				key = k // a string not pointing into Arrow memory
			}
		}
		raw[key] = append(raw[key], [2]float64{float64(m.TS), m.Value})
	})
	if err != nil {
		return nil, nil, err
	}
	out := map[string][]Point{}
	for name, pts := range raw {
		sort.Slice(pts, func(i, j int) bool { return pts[i][0] < pts[j][0] })
		if name == schema.MetricGCCycle {
			// Each trace window counts its GC cycles from 1, and every
			// point is one cycle's start, so the i-th point in time order
			// is cycle i of the whole capture.
			for i := range pts {
				pts[i][1] = float64(i + 1)
			}
		}
		out[name] = downsample(pts, maxSeriesPoints)
	}
	gc, err := readEBPFGC(b, mem)
	if err != nil {
		return nil, nil, err
	}
	if len(gc) > 0 {
		out[ebpfGC] = gc
	}
	return out, windowsOf(spans), nil
}

// ebpfGC is the key of readMetrics' series of the GC cycles the eBPF
// probes saw (no metric has the name).
const ebpfGC = "ebpf gc_start"

// readEBPFGC returns the GC cycles the eBPF probes saw, one point per
// cycle's start numbered from 1: the probes stay attached for the whole
// capture, so unlike a trace window's count this is every cycle of it.
func readEBPFGC(b *bundle.Bundle, mem memory.Allocator) ([]Point, error) {
	starts, err := tables.ReadGCStarts(b, mem)
	if err != nil {
		return nil, err
	}
	var ts [][2]float64
	for _, at := range starts {
		ts = append(ts, [2]float64{float64(at), 0})
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i][0] < ts[j][0] })
	for i := range ts {
		ts[i][1] = float64(i + 1)
	}
	return downsample(ts, maxSeriesPoints), nil
}

// widen stretches the span of source to hold ts.
func widen(spans map[string]*[2]int64, source string, ts int64) {
	s := spans[source]
	if s == nil {
		s = &[2]int64{ts, ts}
		spans[strings.Clone(source)] = s
	}
	s[0], s[1] = min(s[0], ts), max(s[1], ts)
}

// windowsOf lists the spans by start time.
func windowsOf(spans map[string]*[2]int64) []Window {
	out := make([]Window, 0, len(spans))
	for src, s := range spans {
		out = append(out, Window{Start: tsTime(s[0]), End: tsTime(s[1]), Source: src})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// downsample keeps at most n points, evenly spaced by index, always keeping
// the last one.
func downsample(pts [][2]float64, n int) []Point {
	step := 1
	if len(pts) > n {
		step = (len(pts) + n - 1) / n
	}
	out := make([]Point, 0, min(len(pts), n)+1)
	for i := 0; i < len(pts); i += step {
		out = append(out, Point{TS: time.Unix(0, int64(pts[i][0])).UTC(), Value: pts[i][1]})
	}
	if len(pts) > 0 && (len(pts)-1)%step != 0 {
		p := pts[len(pts)-1]
		out = append(out, Point{TS: time.Unix(0, int64(p[0])).UTC(), Value: p[1]})
	}
	return out
}

// readRaces reads the races table into reports, in source and report
// order.
func readRaces(b *bundle.Bundle, mem memory.Allocator, st *stackTable) ([]Race, error) {
	byKey := map[string]*Race{}
	var order []string
	err := tables.ReadRaces(b, mem, func(r schema.Race) {
		key := fmt.Sprintf("%s\x00%d", r.Source, r.Race)
		race := byKey[key]
		if race == nil {
			race = &Race{Source: strings.Clone(r.Source), Number: int(r.Race), Location: strings.Clone(r.Location)}
			byKey[key] = race
			order = append(order, key)
		}
		a := RaceAccess{Access: strings.Clone(r.Access), Addr: fmt.Sprintf("%#x", uint64(r.Addr)), Goid: r.Goid,
			Stack: st.framesOf(r.StackID), State: strings.Clone(r.GoroutineState)}
		if len(a.Stack) > 0 {
			f, _ := locationFrame(a.Stack)
			a.Function, a.File, a.Line = f.Function, f.File, f.Line
		}
		if cs := st.framesOf(r.CreationStackID); len(cs) > 0 {
			a.CreatedBy = &cs[0]
		}
		race.Accesses = append(race.Accesses, a)
	})
	if err != nil {
		return nil, err
	}
	out := make([]Race, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Source != out[j].Source {
			return out[i].Source < out[j].Source
		}
		return out[i].Number < out[j].Number
	})
	return out, nil
}
