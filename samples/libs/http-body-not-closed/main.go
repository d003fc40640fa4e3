// Command http-body-not-closed is a status reporter: two workers take
// pod updates from a queue and post each one's status to an upstream API
// (another process, over loopback) through one shared http.Client. The
// upstream sheds a quarter of the reports with 503 and an error body. The
// bug: report returns on a non-2xx status before it closes the response
// body, so the connection can neither be reused nor released, and each
// shed report leaks the connection's readLoop and writeLoop goroutines,
// their buffers and the socket.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/leakscope/leakscope/samples/internal/service"
	"github.com/leakscope/leakscope/samples/libs/internal/upstream"
)

func main() {
	if upstream.Child() {
		serveUpstream()
		return
	}
	opts := service.Flags(4, "status reports per second (a quarter are shed by the upstream)")
	flag.Parse()
	ctx, stop := service.Context(opts.Duration)
	defer stop()
	srv, err := service.Listen(opts.Addr)
	if err != nil {
		log.Fatal(err)
	}
	addr, err := upstream.Start(ctx)
	if err != nil {
		log.Fatal(err)
	}
	r := &reporter{url: "http://" + addr, client: &http.Client{}} // no Timeout: a call waits as long as the upstream takes
	queue := make(chan int, 64)
	for range 2 {
		go r.worker(ctx, queue)
	}
	http.HandleFunc("/work", func(w http.ResponseWriter, req *http.Request) {
		fmt.Fprintf(w, "%d reports sent\n", r.sent.Load())
	})
	srv.Start()
	service.Pace(ctx, opts.Rate, func(ctx context.Context, n int) {
		select {
		case queue <- n:
		default: // shed when the workers fall behind
		}
	})
	if err := srv.Shutdown(); err != nil {
		log.Fatal(err)
	}
}

// reporter posts pod statuses to the upstream API.
type reporter struct {
	url          string
	client       *http.Client
	sent, failed atomic.Int64
}

// worker reports the status of each update it takes from the queue.
func (r *reporter) worker(ctx context.Context, queue <-chan int) {
	for {
		select {
		case <-ctx.Done():
			return
		case n := <-queue:
			if err := r.report(ctx, n); err != nil && ctx.Err() == nil {
				r.failed.Add(1)
			}
		}
	}
}

// report posts one pod's status. The bug: on a non-2xx answer it returns
// before `defer resp.Body.Close()`.
func (r *reporter) report(ctx context.Context, n int) error {
	body := fmt.Sprintf(`{"pod":"web-%d","phase":"Running","generation":%d}`, n%40, n)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url+"/status", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("report web-%d: %s", n%40, resp.Status) // resp.Body is never closed
	}
	defer resp.Body.Close()
	r.sent.Add(1)
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// serveUpstream is the status API: it accepts three reports in four and
// sheds the rest with 503 and a JSON error.
func serveUpstream() {
	ln, err := upstream.Listen()
	if err != nil {
		log.Fatal(err)
	}
	var n atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /status", func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		w.Header().Set("Content-Type", "application/json")
		if n.Add(1)%4 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, `{"error":"overloaded, retry later","retry_after_seconds":1}`)
			return
		}
		fmt.Fprintln(w, `{"ok":true}`)
	})
	log.Fatal((&http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}).Serve(ln))
}
