package web

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/leakscope/leakscope/analysis"
)

// DefaultMaxUpload is the largest upload body accepted when
// Options.MaxUploadBytes is zero.
const DefaultMaxUpload = 2 << 30

// Options configures the router.
type Options struct {
	// Token, when non-empty, is required on every write (upload, delete)
	// and, on a server that is not Loopback, on every read of the API too
	// unless PublicRead is set. A server on a non-loopback address must
	// set one.
	Token string
	// Loopback restricts the server to loopback clients and Host names;
	// set it when the listen address is a loopback one.
	Loopback bool
	// PublicRead lets anyone who reaches a non-loopback server read every
	// capture without the token (writes still need it).
	PublicRead bool
	// MaxUploadBytes caps an upload body (0: DefaultMaxUpload).
	MaxUploadBytes int64
	// WriteIdle and ReadIdle bound how long a client may stop reading an
	// answer or sending an upload (0: DefaultWriteIdle, DefaultReadIdle).
	WriteIdle, ReadIdle time.Duration
	// MetricsSuspects bounds the suspects of a capture /metrics exports
	// one by one (0: DefaultMetricsSuspects), MetricsCaptures the captures
	// of a service (0: DefaultMetricsCaptures); the rest are summed.
	MetricsSuspects, MetricsCaptures int
	// Transitions decodes goroutines' state changes from a capture's raw
	// traces, for per-goroutine state lanes. The command sets it to
	// ingest.Transitions (web does not import the parsers).
	Transitions analysis.TransitionSource
}

// idRoute matches capture ids only (see idPattern), so no id can name a
// path outside the data directory.
const idRoute = "/api/captures/{id:[a-z0-9][a-z0-9_-]{0,63}}"

// NewRouter returns the workbench's routes: the JSON API of
// docs/DESIGN.md under /api/, Prometheus metrics on MetricsPath and the
// embedded single-page application.
func NewRouter(s *Store, opts Options) http.Handler {
	if opts.MaxUploadBytes <= 0 {
		opts.MaxUploadBytes = DefaultMaxUpload
	}
	if opts.WriteIdle <= 0 {
		opts.WriteIdle = DefaultWriteIdle
	}
	if opts.ReadIdle <= 0 {
		opts.ReadIdle = DefaultReadIdle
	}
	if opts.MetricsSuspects <= 0 {
		opts.MetricsSuspects = DefaultMetricsSuspects
	}
	if opts.MetricsCaptures <= 0 {
		opts.MetricsCaptures = DefaultMetricsCaptures
	}
	m := newServerMetrics(s, opts)
	r := mux.NewRouter()
	r.Handle(MetricsPath, m.handler()).Methods(http.MethodGet)
	r.HandleFunc("/api/captures", listHandler(s)).Methods(http.MethodGet)
	r.HandleFunc("/api/fleet", fleetHandler(s)).Methods(http.MethodGet)
	r.HandleFunc("/api/captures", uploadHandler(s, opts.MaxUploadBytes, opts.ReadIdle, m)).Methods(http.MethodPost)
	r.HandleFunc(idRoute, withCapture(s, captureHandler)).Methods(http.MethodGet)
	r.HandleFunc(idRoute, deleteHandler(s, m)).Methods(http.MethodDelete)
	r.HandleFunc(idRoute+"/report", withCapture(s, reportHandler)).Methods(http.MethodGet)
	r.HandleFunc(idRoute+"/flamegraph", withCapture(s, flamegraphHandler)).Methods(http.MethodGet)
	r.HandleFunc(idRoute+"/top", withCapture(s, topHandler)).Methods(http.MethodGet)
	r.HandleFunc(idRoute+"/peek", withCapture(s, peekHandler)).Methods(http.MethodGet)
	r.HandleFunc(idRoute+"/source", withCapture(s, sourceHandler)).Methods(http.MethodGet)
	r.HandleFunc(idRoute+"/ancestry", withCapture(s, ancestryHandler)).Methods(http.MethodGet)
	r.HandleFunc(idRoute+"/timeline", withCapture(s, timelineHandler)).Methods(http.MethodGet)
	r.HandleFunc(idRoute+"/members", withCapture(s, membersHandler)).Methods(http.MethodGet)
	r.HandleFunc(idRoute+"/lanes", withCapture(s, lanesHandler(opts.Transitions))).Methods(http.MethodGet)
	r.HandleFunc(idRoute+"/raw/{name}", withCapture(s, rawHandler)).Methods(http.MethodGet)
	notFound := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no API endpoint "+r.Method+" "+r.URL.Path)
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed on "+r.URL.Path)
	})
	r.HandleFunc("/c/{capture_id:[0-9A-Za-z._:-]{1,64}}", byCaptureIDHandler(s)).Methods(http.MethodGet)
	r.PathPrefix("/api/").Handler(notFound)
	r.PathPrefix("/").Handler(staticHandler())
	return idleWrites(opts.WriteIdle, guard(opts, r))
}

// withCapture resolves the {id} of the route, holds the capture for the
// duration of the request and answers 404 for an unknown id.
func withCapture(s *Store, h func(w http.ResponseWriter, r *http.Request, c *capture)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, release, err := s.Acquire(mux.Vars(r)["id"])
		if err != nil {
			writeError(w, statusOf(err), err.Error())
			return
		}
		defer release()
		h(w, r, c)
	}
}
