// Command cache-pin is a report service whose heap grows steadily with no
// goroutine leak: rendered reports go into a map cache keyed by request id
// that is never evicted (ids never repeat), and every request registers a
// shutdown hook whose closure pins the request's scratch state.
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"sync"

	"github.com/leakscope/leakscope/samples/internal/service"
)

// ReportCache memoises rendered reports. Bug: no size bound or eviction,
// and the key includes the unique request id, so it never hits.
type ReportCache struct {
	mu      sync.Mutex
	entries map[string][]byte
}

// Put stores body under key.
func (c *ReportCache) Put(key string, body []byte) {
	c.mu.Lock()
	c.entries[key] = body
	c.mu.Unlock()
}

// Get returns the cached body for key.
func (c *ReportCache) Get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.entries[key]
	return b, ok
}

// requestState is per-request scratch space.
type requestState struct {
	id      string
	scratch []byte
	flushed bool
}

// newRequestState allocates the scratch state of one request.
func newRequestState(id string) *requestState {
	return &requestState{id: id, scratch: make([]byte, 32<<10)}
}

func (st *requestState) flush() { st.flushed = true }

// shutdownHooks run at exit. Bug: each request appends a closure over its
// state, so every request's scratch buffer stays reachable.
var (
	hooksMu       sync.Mutex
	shutdownHooks []func()
)

// onShutdown registers fn to run at exit.
func onShutdown(fn func()) {
	hooksMu.Lock()
	shutdownHooks = append(shutdownHooks, fn)
	hooksMu.Unlock()
}

// renderReport renders the usage report of a tenant, rows lines of at
// most reportLine bytes.
func renderReport(tenant string, rows int) []byte {
	body := make([]byte, 0, rows*reportLine)
	for i := range rows {
		body = append(body, tenant...)
		body = append(body, ',')
		body = strconv.AppendInt(body, int64(i), 10)
		body = append(body, ",cpu=250m,memory=512Mi,storage=10Gi\n"...)
	}
	return body
}

// reportLine bounds one line of a report.
const reportLine = 64

// reportRows is the lines of a tenant's report: about 31 KiB a report,
// so 20 requests a second cache about 15 MiB in 25 s, some 30 heap
// profile samples at the default rate (the planted leak stands well
// above the sampling noise of a short capture).
const reportRows = 500

// Service answers report requests.
type Service struct {
	cache *ReportCache
}

// Report serves one report request.
func (s *Service) Report(ctx context.Context, id, tenant string) []byte {
	st := newRequestState(id)
	onShutdown(st.flush)
	key := tenant + "/" + id
	if b, ok := s.cache.Get(key); ok {
		return b
	}
	var body []byte
	trace.WithRegion(ctx, "render", func() { body = renderReport(tenant, reportRows) })
	s.cache.Put(key, body)
	copy(st.scratch, body)
	return body
}

// event handles one report request.
func (s *Service) event(ctx context.Context, n int) {
	ctx, task := trace.NewTask(ctx, "report")
	defer task.End()
	tenant := fmt.Sprintf("tenant-%d", n%20)
	pprof.Do(ctx, pprof.Labels("endpoint", "report", "tenant", tenant), func(ctx context.Context) {
		s.Report(ctx, "req-"+strconv.Itoa(n), tenant)
	})
}

// serveWork renders a small report without caching it.
func serveWork(w http.ResponseWriter, r *http.Request) {
	ctx, task := trace.NewTask(r.Context(), "work")
	defer task.End()
	var body []byte
	trace.WithRegion(ctx, "render", func() { body = renderReport("adhoc", 20) })
	sum := sha256.Sum256(body)
	fmt.Fprintf(w, "%x\n", sum[:8])
}

func main() {
	o := service.Flags(20, "report requests per second")
	flag.Parse()
	if err := run(*o); err != nil {
		fmt.Fprintln(os.Stderr, "cache-pin:", err)
		os.Exit(1)
	}
}

func run(o service.Options) error {
	ctx, stop := service.Context(o.Duration)
	defer stop()
	srv, err := service.Listen(o.Addr)
	if err != nil {
		return err
	}
	s := &Service{cache: &ReportCache{entries: make(map[string][]byte)}}
	http.HandleFunc("/work", serveWork)
	srv.Start()
	service.Pace(ctx, o.Rate, s.event)
	return srv.Shutdown()
}
