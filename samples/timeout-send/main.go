// Command timeout-send is a pricing API whose handler runs the computation
// in a worker goroutine and gives up after a deadline. The worker ignores
// the context and sends its result on an unbuffered channel, so every
// timed-out request leaves a worker blocked on the send forever. A built-in
// client drives the API over real HTTP.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"runtime/pprof"
	"runtime/trace"
	"syscall"
	"time"
)

// Quote is the computed price.
type Quote struct {
	SKU   string  `json:"sku"`
	Price float64 `json:"price"`
}

// Handler serves /api/quote with a deadline.
type Handler struct {
	Timeout    time.Duration
	MaxLatency time.Duration
}

// ServeHTTP computes a quote or answers 504 after h.Timeout.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, task := trace.NewTask(r.Context(), "quote")
	defer task.End()
	ctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	sku := r.URL.Query().Get("sku")
	ch := make(chan Quote) // bug: unbuffered, and compute never checks ctx
	ctx = pprof.WithLabels(ctx, pprof.Labels("handler", "quote"))
	pprof.SetGoroutineLabels(ctx)
	go h.compute(ctx, sku, ch)
	select {
	case q := <-ch:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(q)
	case <-ctx.Done():
		http.Error(w, "pricing timed out", http.StatusGatewayTimeout)
	}
}

// compute prices sku slowly and sends the result, even after the caller
// has stopped waiting.
func (h *Handler) compute(ctx context.Context, sku string, ch chan<- Quote) {
	var q Quote
	trace.WithRegion(ctx, "price", func() {
		time.Sleep(rand.N(h.MaxLatency))
		sum := sha256.Sum256([]byte(sku))
		q = Quote{SKU: sku, Price: float64(binary.BigEndian.Uint16(sum[:])) / 100}
	})
	ch <- q
}

// Client calls the API like an upstream service would.
type Client struct {
	base string
	http *http.Client
}

// call issues one quote request.
func (c *Client) call(ctx context.Context, n int) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/api/quote?sku=sku-%d", c.base, n%100), nil)
	if err != nil {
		return
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// event sends one request without waiting for it.
func (c *Client) event(ctx context.Context, n int) { go c.call(ctx, n) }

// serveWork prices a small basket synchronously.
func serveWork(w http.ResponseWriter, r *http.Request) {
	ctx, task := trace.NewTask(r.Context(), "work")
	defer task.End()
	var total float64
	trace.WithRegion(ctx, "price-basket", func() {
		for i := range 16 {
			sum := sha256.Sum256([]byte(fmt.Sprintf("sku-%d", i)))
			total += float64(binary.BigEndian.Uint16(sum[:])) / 100
		}
	})
	fmt.Fprintf(w, "%.2f\n", total)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	rate := flag.Float64("rate", 20, "client requests per second")
	duration := flag.Duration("duration", 0, "how long to run (0 = until SIGINT/SIGTERM)")
	flag.Parse()
	if err := run(*addr, *rate, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "timeout-send:", err)
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
	http.Handle("/api/quote", &Handler{Timeout: 50 * time.Millisecond, MaxLatency: 200 * time.Millisecond})
	http.HandleFunc("/work", serveWork)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	c := &Client{base: "http://" + ln.Addr().String(), http: &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 32, IdleConnTimeout: 30 * time.Second},
	}}
	pace(ctx, rate, c.event)
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
