// Command cache-pin is a report service whose heap grows steadily with no
// goroutine leak: rendered reports go into a map cache keyed by request id
// that is never evicted (ids never repeat), and every request registers a
// shutdown hook whose closure pins the request's scratch state.
package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"sync"
	"syscall"
	"time"
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
	return &requestState{id: id, scratch: make([]byte, 16<<10)}
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

// renderReport renders the usage report of a tenant.
func renderReport(tenant string, rows int) []byte {
	body := make([]byte, 0, 8<<10)
	for i := range rows {
		body = append(body, tenant...)
		body = append(body, ',')
		body = strconv.AppendInt(body, int64(i), 10)
		body = append(body, ",cpu=250m,memory=512Mi,storage=10Gi\n"...)
	}
	return body
}

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
	trace.WithRegion(ctx, "render", func() { body = renderReport(tenant, 150) })
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
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	rate := flag.Float64("rate", 20, "report requests per second")
	duration := flag.Duration("duration", 0, "how long to run (0 = until SIGINT/SIGTERM)")
	flag.Parse()
	if err := run(*addr, *rate, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "cache-pin:", err)
		os.Exit(1)
	}
}

func run(addr string, rate float64, duration time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, duration)
		defer cancel()
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	s := &Service{cache: &ReportCache{entries: make(map[string][]byte)}}
	http.HandleFunc("/work", serveWork)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	pace(ctx, rate, s.event)
	return shutdown(srv, errc)
}

// pace calls fn about rate times per second until ctx is done.
func pace(ctx context.Context, rate float64, fn func(context.Context, int)) {
	if rate <= 0 {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(max(10*time.Millisecond, time.Duration(float64(time.Second)/rate)))
	defer t.Stop()
	start, n := time.Now(), 0
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for due := int(now.Sub(start).Seconds() * rate); n < due; n++ {
				fn(ctx, n)
			}
		}
	}
}

// shutdown stops the HTTP server, forcing it closed after 2 s.
func shutdown(srv *http.Server, errc <-chan error) error {
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
