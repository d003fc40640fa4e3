// Command map-cache-grows is a pricing service that caches each quote
// it renders in a map keyed by request id. Ids never repeat and nothing
// evicts, so the heap grows by one rendered quote per request: slowly at
// a low request rate (a few hundred KiB a minute at -rate 2), which a
// short capture at the runtime's default heap sampling rate cannot tell
// from noise. -leak-after delays the first quote (none is rendered
// before), so a test knows when the growth truly began; /work says when
// it did.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/leakscope/leakscope/samples/internal/service"
)

func main() {
	opts := service.Flags(50, "quotes per second")
	after := flag.Duration("leak-after", 0, "render quotes without caching them for this long first")
	flag.Parse()
	ctx, stop := service.Context(opts.Duration)
	defer stop()
	srv, err := service.Listen(opts.Addr)
	if err != nil {
		log.Fatal(err)
	}
	q := &quoter{cache: map[string]string{}, cacheFrom: time.Now().Add(*after)}
	http.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, q.since())
	})
	srv.Start()
	service.Pace(ctx, opts.Rate, func(ctx context.Context, n int) {
		q.quote(fmt.Sprintf("req-%d", n), n)
		service.Called()
	})
	if err := srv.Shutdown(); err != nil {
		log.Fatal(err)
	}
}

// quoter renders quotes and caches them.
type quoter struct {
	mu        sync.Mutex
	cache     map[string]string
	cacheFrom time.Time
	first     time.Time // the first quote cached
}

// quote renders a quote for a request and caches it. The bug: ids never
// repeat, so the cache only grows.
func (q *quoter) quote(id string, n int) string {
	if time.Now().Before(q.cacheFrom) {
		return "" // warming up: nothing rendered, nothing cached
	}
	body := render(id, n)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.first.IsZero() {
		q.first = time.Now()
	}
	q.cache[id] = body
	return body
}

// render builds a 2 KiB quote.
func render(id string, n int) string {
	var b strings.Builder
	b.Grow(2048)
	for b.Len() < 2000 {
		fmt.Fprintf(&b, "%s:%d;", id, n)
	}
	return b.String()
}

// since says when the first quote was cached, in Unix nanoseconds (0:
// none yet).
func (q *quoter) since() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.first.IsZero() {
		return 0
	}
	return q.first.UnixNano()
}
