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
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"time"

	"github.com/leakscope/leakscope/samples/internal/service"
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
	// slots bounds the calls in flight, as an upstream with a bounded
	// worker pool does: when the API slows down (a loaded machine), events
	// beyond it are shed, so the client's own goroutines and connections
	// stay bounded and only the handler's workers leak.
	slots chan struct{}
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
func (c *Client) event(ctx context.Context, n int) {
	select {
	case c.slots <- struct{}{}:
		go func() {
			defer func() { <-c.slots }()
			c.call(ctx, n)
		}()
	default: // shed: every slot is busy
	}
}

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
	o := service.Flags(20, "client requests per second")
	flag.Parse()
	if err := run(*o); err != nil {
		fmt.Fprintln(os.Stderr, "timeout-send:", err)
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
	http.Handle("/api/quote", &Handler{Timeout: 50 * time.Millisecond, MaxLatency: 200 * time.Millisecond})
	http.HandleFunc("/work", serveWork)
	srv.Start()
	c := &Client{base: "http://" + srv.Addr().String(), slots: make(chan struct{}, 16), http: &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{MaxConnsPerHost: 4, MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second},
	}}
	service.Pace(ctx, o.Rate, c.event)
	return srv.Shutdown()
}
