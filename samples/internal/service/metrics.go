package service

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Every sample serves /metrics as an instrumented Go service does:
// client_golang's default registry, whose Go and process collectors export
// go_goroutines, go_memstats_heap_inuse_bytes and the rest. Prometheus
// scrapes it in the alert end-to-end test (deploy/), which alerts on
// go_goroutines like a real deployment.
func init() {
	http.Handle("/metrics", promhttp.Handler())
}
