package web

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/internal/format"
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
	descSuspectGrowth = prometheus.NewDesc("leakscope_suspect_goroutine_growth_per_second",
		"Growth of a goroutine suspect, goroutines per second (the report's per-minute figure / 60).", suspectLabels, nil)
	descSuspectHeap = prometheus.NewDesc("leakscope_suspect_heap_bytes",
		"Heap bytes of a suspect: in use at a heap site, or retained by a goroutine suspect.", suspectLabels, nil)
	descSuspectHeapGrowth = prometheus.NewDesc("leakscope_suspect_heap_growth_bytes_per_second",
		"Growth of a heap suspect, bytes per second (the report's per-minute figure / 60).", suspectLabels, nil)
	descSuspectScore = prometheus.NewDesc("leakscope_suspect_score",
		"Score of a suspect, 0 to 100 (what report --fail-on compares with).", suspectLabels, nil)
	descAnalysisFailed = prometheus.NewDesc("leakscope_capture_analysis_failed",
		"1 when the capture could not be analysed (an error, or an analysis cut at its deadline or heap budget).", captureLabels, nil)
	descAnalysisPending = prometheus.NewDesc("leakscope_capture_analysis_pending",
		"1 while the capture's analysis runs: its suspects are exported once it has finished.", captureLabels, nil)
	descSuspectsOmitted = prometheus.NewDesc("leakscope_capture_suspects_omitted",
		"Suspects of the capture past the top ones exported one by one; their figures are summed in the series with suspect=\"other\".", captureLabels, nil)
	descServiceCaptures = prometheus.NewDesc("leakscope_service_captures",
		"Captures the workbench holds of a service.", []string{"service"}, nil)
	descServiceOmitted = prometheus.NewDesc("leakscope_service_captures_omitted",
		"Captures of a service older than the newest ones exported one by one.", []string{"service"}, nil)
	descServiceOmittedSuspects = prometheus.NewDesc("leakscope_service_omitted_captures_suspects",
		"Suspects in the captures of a service that are not exported one by one, summed.", []string{"service"}, nil)
)

// Default bounds of /metrics: per capture, the suspects exported one by
// one (by rank; the rest summed), and per service, the newest captures
// exported (the rest counted and summed per service).
const (
	DefaultMetricsSuspects = 10
	DefaultMetricsCaptures = 5
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
func newServerMetrics(s *Store, opts Options) *serverMetrics {
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
	m.reg.MustRegister(m.uploads, m.stored, m.deletes, storeCollector{s, opts.MetricsSuspects, opts.MetricsCaptures},
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

// storeCollector exports the captures of a store and their suspects,
// bounded: per service the newest captures captures, per capture the top
// suspects suspects (the report ranks them); the rest are summed.
type storeCollector struct {
	s                  *Store
	suspects, captures int
}

func (storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCaptureGoroutines, descCapturePeak, descCaptureHeap, descCaptureSuspects,
		descCaptureEnd, descSuspectGoroutines, descSuspectGrowth, descSuspectHeap, descSuspectHeapGrowth,
		descSuspectScore, descAnalysisFailed, descAnalysisPending, descSuspectsOmitted, descServiceCaptures, descServiceOmitted,
		descServiceOmittedSuspects} {
		ch <- d
	}
}

// Collect sends the series of every capture from its report, without
// waiting for an analysis more than listWait in all: a capture whose
// analysis runs longer is exported as pending. Captures are labelled by
// the capture id of their manifest (as Parquet and the API's
// capture_id); of two captures with one id, node and service, the newer
// is exported. Label values are names from the input, escaped
// (format.Text): Prometheus takes only valid UTF-8, and a control
// character in a label breaks the lines of a scrape.
func (c storeCollector) Collect(ch chan<- prometheus.Metric) {
	perService := map[string]int{}
	omitted := map[string][2]int{} // captures, suspects
	seen := map[[3]string]bool{}
	listed := c.s.List() // newest first
	awaitListed(listed, listWait)
	for _, l := range listed {
		c.collectOne(ch, l.id, perService, omitted, seen)
	}
	for _, svc := range slices.Sorted(maps.Keys(perService)) {
		gauge(ch, descServiceCaptures, float64(perService[svc]), svc)
		o := omitted[svc]
		gauge(ch, descServiceOmitted, float64(o[0]), svc)
		gauge(ch, descServiceOmittedSuspects, float64(o[1]), svc)
	}
}

// collectOne sends capture id's series, or counts it among its service's
// omitted ones, holding the capture meanwhile.
func (c storeCollector) collectOne(ch chan<- prometheus.Metric, id string, perService map[string]int, omitted map[string][2]int, seen map[[3]string]bool) {
	cp, release, err := c.s.Acquire(id)
	if err != nil {
		return // deleted meanwhile
	}
	defer release()
	m := cp.b.Manifest
	svc := format.Text(bundle.OrUnknown(m.Target.Service()))
	perService[svc]++
	key := [3]string{m.CaptureID, m.Node, svc}
	if perService[svc] > c.captures || seen[key] {
		o := omitted[svc]
		o[0]++
		if rep, err := cp.ListedReport(); err == nil {
			o[1] += len(rep.Suspects)
		}
		omitted[svc] = o
		return
	}
	seen[key] = true
	collectCapture(ch, cp, c.suspects)
}

// gauge sends one series; its label values must be escaped already
// (format.Text), which NewConstMetric checks (a series it refuses is
// left out, never a panic).
func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, lv ...string) {
	if m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, v, lv...); err == nil {
		ch <- m
	}
}

// collectCapture sends one capture's series: its top suspects one by
// one, the rest summed under suspect="other".
func collectCapture(ch chan<- prometheus.Metric, c *capture, top int) {
	m := c.b.Manifest
	labels := texts(m.CaptureID, bundle.OrUnknown(m.NodeName()), bundle.OrUnknown(m.Target.Service()))
	rep, err := c.ListedReport()
	pending := errors.Is(err, errPending)
	gauge(ch, descAnalysisPending, b2f(pending), labels...)
	if !m.End.IsZero() {
		gauge(ch, descCaptureEnd, float64(m.End.UnixNano())/1e9, labels...)
	}
	if pending {
		return
	}
	gauge(ch, descAnalysisFailed, b2f(err != nil), labels...)
	if err != nil {
		return
	}
	if p, ok := last(rep.Series.Goroutines); ok {
		gauge(ch, descCaptureGoroutines, p.Value, labels...)
	}
	gauge(ch, descCapturePeak, float64(rep.Bundle.PeakGoroutines), labels...)
	if p, ok := last(rep.Series.HeapInuse); ok {
		gauge(ch, descCaptureHeap, p.Value, labels...)
	}
	gauge(ch, descCaptureSuspects, float64(len(rep.Suspects)), labels...)
	shown := rep.Suspects[:min(top, len(rep.Suspects))]
	rest := rep.Suspects[len(shown):]
	gauge(ch, descSuspectsOmitted, float64(len(rest)), labels...)
	for _, s := range shown {
		sl := append(append([]string{}, labels...), texts(s.ID, s.Kind, s.Pattern, s.Location)...)
		gauge(ch, descSuspectScore, s.Score, sl...)
		suspectFigures(ch, sl, s.Kind, float64(s.Count), s.GrowthPerMin/60, float64(s.RetainedBytes))
	}
	// The rest, per kind: counts and growth summed, the highest score.
	for _, kind := range []string{analysis.KindGoroutine, analysis.KindHeap} {
		var n int
		var count, growth, retained, score float64
		for _, s := range rest {
			if s.Kind == kind {
				n++
				count, growth, retained, score = count+float64(s.Count), growth+s.GrowthPerMin/60, retained+float64(s.RetainedBytes), max(score, s.Score)
			}
		}
		if n == 0 {
			continue
		}
		sl := append(append([]string{}, labels...), "other", kind, "other", "other")
		gauge(ch, descSuspectScore, score, sl...)
		suspectFigures(ch, sl, kind, count, growth, retained)
	}
}

// suspectFigures sends a suspect's count, growth per second and retained
// heap under the families of its kind.
func suspectFigures(ch chan<- prometheus.Metric, sl []string, kind string, count, growth, retained float64) {
	if kind == analysis.KindHeap {
		gauge(ch, descSuspectHeap, count, sl...)
		gauge(ch, descSuspectHeapGrowth, growth, sl...)
		return
	}
	gauge(ch, descSuspectGoroutines, count, sl...)
	gauge(ch, descSuspectGrowth, growth, sl...)
	if retained > 0 {
		gauge(ch, descSuspectHeap, retained, sl...)
	}
}

// texts escapes label values (see gauge).
func texts(vs ...string) []string {
	for i, v := range vs {
		vs[i] = format.Text(v)
	}
	return vs
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func last(ps []analysis.Point) (analysis.Point, bool) {
	if len(ps) == 0 {
		return analysis.Point{}, false
	}
	return ps[len(ps)-1], true
}
