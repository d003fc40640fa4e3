package gotrace

import (
	"strings"

	"github.com/leakscope/leakscope/ingest/schema"
)

// Metric names written besides the schema's well-known ones.
const (
	MetricGOMAXPROCS = "gomaxprocs"
	MetricGCMark     = "gc_mark_ns"
)

// goroutineMetricEvery is the least trace time between two samples of the
// goroutine count (one is also taken at each GC start and at the end).
const goroutineMetricEvery = 10_000_000 // 10 ms

// traceMetricNames maps the trace's metric names to the table's.
var traceMetricNames = map[string]string{
	"/memory/classes/heap/objects:bytes": schema.MetricHeapLive,
	"/gc/heap/goal:bytes":                schema.MetricHeapGoal,
	"/sched/gomaxprocs:threads":          MetricGOMAXPROCS,
}

// metricState follows GC cycles, stop-the-world pauses and the goroutine
// count.
type metricState struct {
	gcCycles    int64
	gcStart     int64 // trace time of the open mark phase, 0 if none
	stwStart    map[int64]int64
	lastGCount  int
	lastGTS     int64
	gCountValid bool
}

func (h *handler) emit(ts int64, name string, v float64) {
	h.append(schema.Metric{TS: h.clk.wall(ts), Name: name, Value: v, Source: h.metricSource})
}

// goroutinesChanged samples the goroutine count when enough trace time has
// passed since the last sample.
func (m *metricState) goroutinesChanged(h *handler, ts int64) {
	if m.gCountValid && ts-m.lastGTS < goroutineMetricEvery {
		return
	}
	m.emitGoroutines(h, ts, false)
}

// emitGoroutines writes the goroutine count, unless unchanged and recent
// (and not forced).
//
// Nothing is written during the trace's first generation: the runtime
// reports a parked goroutine's status only when it first acts or when the
// generation ends, so until then the live set is an undercount (a window
// opening on 300 parked goroutines would show 2).
func (m *metricState) emitGoroutines(h *handler, ts int64, force bool) {
	if h.syncs < 2 {
		return
	}
	if !force && m.gCountValid && h.live.len() == m.lastGCount && ts-m.lastGTS < goroutineMetricEvery {
		return
	}
	m.gCountValid = true
	m.lastGCount = h.live.len()
	m.lastGTS = ts
	h.emit(ts, schema.MetricGoroutines, float64(h.live.len()))
}

func (h *handler) metric(r *rec) {
	name, ok := traceMetricNames[r.str]
	if !ok {
		name = r.str
	}
	h.emit(r.ts, name, float64(r.val))
}

const (
	rangeGCMark = "GC concurrent mark phase"
	rangeSTW    = "stop-the-world ("
	rangeSTWGC  = "stop-the-world (GC"
)

func (h *handler) rangeBegin(r *rec) {
	m := &h.metrics
	switch {
	case r.str == rangeGCMark:
		m.gcCycles++
		m.gcStart = r.ts
		h.emit(r.ts, schema.MetricGCCycle, float64(m.gcCycles))
		m.emitGoroutines(h, r.ts, true)
	case strings.HasPrefix(r.str, rangeSTW):
		if m.stwStart == nil {
			m.stwStart = make(map[int64]int64)
		}
		m.stwStart[r.g] = r.ts
	}
}

func (h *handler) rangeEnd(r *rec) {
	m := &h.metrics
	switch {
	case r.str == rangeGCMark:
		if m.gcStart != 0 {
			h.emit(m.gcStart, MetricGCMark, float64(r.ts-m.gcStart))
			m.gcStart = 0
		}
	case strings.HasPrefix(r.str, rangeSTW):
		start, ok := m.stwStart[r.g]
		if !ok {
			return
		}
		delete(m.stwStart, r.g)
		h.emit(start, schema.MetricSTWPause, float64(r.ts-start))
		if strings.HasPrefix(r.str, rangeSTWGC) {
			h.emit(start, schema.MetricGCPause, float64(r.ts-start))
		}
	}
}
