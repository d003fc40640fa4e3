package web

import (
	"net/http"
	"strings"

	"github.com/leakscope/leakscope/analysis"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MetricsPath is where the workbench serves its Prometheus metrics.
const MetricsPath = "/metrics"

// Labels of the per-capture and per-suspect series.
var (
	captureLabels = []string{"capture", "node", "service"}
	suspectLabels = append(append([]string{}, captureLabels...), "suspect", "kind", "pattern", "location")
)

// The per-capture and per-suspect series. Every value is a field of the
// capture's analysis report (the one the report and every view show); none
// is computed here.
var (
	descCaptureGoroutines = prometheus.NewDesc("leakscope_capture_goroutines",
		"Goroutines in the capture's last snapshot (the report's goroutine series).", captureLabels, nil)
	descCapturePeak = prometheus.NewDesc("leakscope_capture_peak_goroutines",
		"Largest goroutine count of any snapshot of the capture.", captureLabels, nil)
	descCaptureHeap = prometheus.NewDesc("leakscope_capture_heap_inuse_bytes",
		"Heap in use in the capture's last heap profile (the report's heap_inuse series).", captureLabels, nil)
	descCaptureSuspects = prometheus.NewDesc("leakscope_capture_suspects",
		"Leak suspects the analysis found in the capture.", captureLabels, nil)
	descCaptureEnd = prometheus.NewDesc("leakscope_capture_end_timestamp_seconds",
		"When the capture ended (Unix seconds).", captureLabels, nil)
	descSuspectGoroutines = prometheus.NewDesc("leakscope_suspect_goroutines",
		"Goroutines of a goroutine suspect in the last snapshot.", suspectLabels, nil)
	descSuspectGrowth = prometheus.NewDesc("leakscope_suspect_goroutine_growth_per_minute",
		"Growth of a goroutine suspect, goroutines per minute.", suspectLabels, nil)
	descSuspectHeap = prometheus.NewDesc("leakscope_suspect_heap_bytes",
		"Heap bytes of a suspect: in use at a heap site, or retained by a goroutine suspect.", suspectLabels, nil)
	descSuspectHeapGrowth = prometheus.NewDesc("leakscope_suspect_heap_growth_bytes_per_minute",
		"Growth of a heap suspect, bytes per minute.", suspectLabels, nil)
	descSuspectScore = prometheus.NewDesc("leakscope_suspect_score",
		"Score of a suspect, 0 to 100 (what report --fail-on compares with).", suspectLabels, nil)
	descAnalysisFailed = prometheus.NewDesc("leakscope_capture_analysis_failed",
		"1 when the capture could not be analysed.", captureLabels, nil)
)

// serverMetrics are the workbench's own counters and its registry.
type serverMetrics struct {
	reg     *prometheus.Registry
	uploads *prometheus.CounterVec
	stored  *prometheus.CounterVec
	deletes prometheus.Counter
}

// newServerMetrics registers the store's per-capture collector, the
// workbench's counters and the Go and process collectors.
func newServerMetrics(s *Store) *serverMetrics {
	m := &serverMetrics{
		reg: prometheus.NewRegistry(),
		uploads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leakscope_uploads_total",
			Help: "Capture uploads by result (stored, duplicate, refused, too_large, error) and client (agent, cli, other).",
		}, []string{"result", "client"}),
		stored: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leakscope_upload_stored_captures_total",
			Help: "Captures stored from uploads, by node and service.",
		}, []string{"node", "service"}),
		deletes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "leakscope_captures_deleted_total",
			Help: "Captures deleted through the API.",
		}),
	}
	m.reg.MustRegister(m.uploads, m.stored, m.deletes, storeCollector{s},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// handler serves the registry in the Prometheus exposition formats.
func (m *serverMetrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// uploadClient names who sent an upload, from its User-Agent.
func uploadClient(r *http.Request) string {
	ua := r.UserAgent()
	switch {
	case strings.HasPrefix(ua, "leakscope-agent"):
		return "agent"
	case strings.HasPrefix(ua, "leakscope"):
		return "cli"
	}
	return "other"
}

// storeCollector exports the captures of a store and their suspects.
type storeCollector struct{ s *Store }

func (storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCaptureGoroutines, descCapturePeak, descCaptureHeap, descCaptureSuspects,
		descCaptureEnd, descSuspectGoroutines, descSuspectGrowth, descSuspectHeap, descSuspectHeapGrowth,
		descSuspectScore, descAnalysisFailed} {
		ch <- d
	}
}

// Collect analyses captures not analysed yet (the report is kept, as for
// every other view) and sends their series.
func (c storeCollector) Collect(ch chan<- prometheus.Metric) {
	for _, listed := range c.s.List() {
		cp, release, err := c.s.Acquire(listed.id)
		if err != nil {
			continue // deleted meanwhile
		}
		collectCapture(ch, cp)
		release()
	}
}

func collectCapture(ch chan<- prometheus.Metric, c *capture) {
	m := c.b.Manifest
	labels := []string{c.id, m.Node, m.Target.Service()}
	gauge := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	rep, err := c.Report()
	if err != nil {
		gauge(descAnalysisFailed, 1, labels...)
		return
	}
	gauge(descAnalysisFailed, 0, labels...)
	if p, ok := last(rep.Series.Goroutines); ok {
		gauge(descCaptureGoroutines, p.Value, labels...)
	}
	gauge(descCapturePeak, float64(rep.Bundle.PeakGoroutines), labels...)
	if p, ok := last(rep.Series.HeapInuse); ok {
		gauge(descCaptureHeap, p.Value, labels...)
	}
	gauge(descCaptureSuspects, float64(len(rep.Suspects)), labels...)
	if !m.End.IsZero() {
		gauge(descCaptureEnd, float64(m.End.UnixNano())/1e9, labels...)
	}
	for _, s := range rep.Suspects {
		sl := append(append([]string{}, labels...), s.ID, s.Kind, s.Pattern, s.Location)
		gauge(descSuspectScore, s.Score, sl...)
		switch s.Kind {
		case analysis.KindHeap:
			gauge(descSuspectHeap, float64(s.Count), sl...)
			gauge(descSuspectHeapGrowth, s.GrowthPerMin, sl...)
		default:
			gauge(descSuspectGoroutines, float64(s.Count), sl...)
			gauge(descSuspectGrowth, s.GrowthPerMin, sl...)
			if s.RetainedBytes > 0 {
				gauge(descSuspectHeap, float64(s.RetainedBytes), sl...)
			}
		}
	}
}

func last(ps []analysis.Point) (analysis.Point, bool) {
	if len(ps) == 0 {
		return analysis.Point{}, false
	}
	return ps[len(ps)-1], true
}
