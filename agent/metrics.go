package agent

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// processLabels label the per-process gauges; they name the process, so an
// alert on them tells the agent's webhook which process to capture. A
// process's pod, when it has one, is the pod label of
// leakscope_agent_process_pod_info (no series carries an empty pod="").
var processLabels = []string{"node", "pid", "exe"}

// metrics are the agent's own series, served on its listen address.
type metrics struct {
	reg        *prometheus.Registry
	goroutines *prometheus.GaugeVec
	heap       *prometheus.GaugeVec
	podInfo    *prometheus.GaugeVec
	watched    prometheus.Gauge
	watchErrs  prometheus.Counter
	scans      prometheus.Counter
	triggers   *prometheus.CounterVec
	alerts     *prometheus.CounterVec
	captures   *prometheus.CounterVec
	uploads    *prometheus.CounterVec
	spoolBytes prometheus.Gauge
	spoolCount prometheus.Gauge
	dropped    prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		goroutines: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "leakscope_agent_process_goroutines",
			Help: "Goroutines of a watched process (total of its goroutine profile)."}, processLabels),
		heap: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "leakscope_agent_process_heap_inuse_bytes",
			Help: "Heap in use of a watched process (inuse_space total of its heap profile)."}, processLabels),
		podInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "leakscope_agent_process_pod_info",
			Help: "1 for a watched process in a pod, labelled with the pod name (join on node and pid)."}, []string{"node", "pid", "pod"}),
		watched: prometheus.NewGauge(prometheus.GaugeOpts{Name: "leakscope_agent_watched_processes",
			Help: "Processes the agent watches."}),
		watchErrs: prometheus.NewCounter(prometheus.CounterOpts{Name: "leakscope_agent_watch_errors_total",
			Help: "Watch samples that failed (target not answering, bad profile)."}),
		scans: prometheus.NewCounter(prometheus.CounterOpts{Name: "leakscope_agent_process_scans_total",
			Help: "Looks through /proc for the selected processes (watch loop and unmatched alerts)."}),
		triggers: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leakscope_agent_triggers_total",
			Help: "Capture triggers by source (rule, alert) and result (started, busy, cooldown)."}, []string{"source", "result"}),
		alerts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leakscope_agent_alerts_total",
			Help: "Alertmanager alerts received, by result (matched, no_match, ambiguous, resolved, throttled)."}, []string{"result"}),
		captures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leakscope_agent_captures_total",
			Help: "Captures run, by result (ok, failed)."}, []string{"result"}),
		uploads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leakscope_agent_uploads_total",
			Help: "Bundle uploads to the workbench, by result (ok, failed)."}, []string{"result"}),
		spoolBytes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "leakscope_agent_spool_bytes",
			Help: "Bytes the spool directory's entries take."}),
		spoolCount: prometheus.NewGauge(prometheus.GaugeOpts{Name: "leakscope_agent_spool_entries",
			Help: "Entries in the spool directory."}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "leakscope_agent_spool_dropped_total",
			Help: "Spool entries that gave up their bundle or reports because the spool was full (their entry and cooldown stay)."}),
	}
	m.reg.MustRegister(m.goroutines, m.heap, m.podInfo, m.watched, m.watchErrs, m.scans, m.triggers, m.alerts, m.captures,
		m.uploads, m.spoolBytes, m.spoolCount, m.dropped,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

func (m *metrics) labels(node string, p Process) []string {
	return []string{node, strconv.Itoa(p.PID), p.Name()}
}

// watch sets a process's pod info when it has a pod.
func (m *metrics) watch(node string, p Process) {
	if p.Pod != "" {
		m.podInfo.WithLabelValues(node, strconv.Itoa(p.PID), p.Pod).Set(1)
	}
}

// forget removes a process's gauges once it is no longer watched.
func (m *metrics) forget(node string, p Process) {
	m.goroutines.DeleteLabelValues(m.labels(node, p)...)
	m.heap.DeleteLabelValues(m.labels(node, p)...)
	if p.Pod != "" {
		m.podInfo.DeleteLabelValues(node, strconv.Itoa(p.PID), p.Pod)
	}
}
