// Command http-transport-shared is the healthy twin of
// http-transport-per-call: the same inventory syncer, with one
// http.Client (and so one Transport and its pool of connections) made at
// start-up and shared by every sync.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"time"

	"github.com/leakscope/leakscope/samples/internal/service"
	"github.com/leakscope/leakscope/samples/libs/internal/upstream"
)

func main() {
	if upstream.Child() {
		serveUpstream()
		return
	}
	opts := service.Flags(5, "stock syncs per second")
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
	s := &syncer{url: "http://" + addr, client: &http.Client{Transport: &http.Transport{}, Timeout: 5 * time.Second}}
	http.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		n, err := s.fetchStock(r.Context(), 1)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		fmt.Fprintf(w, "%d bytes of stock\n", n)
	})
	srv.Start()
	service.Pace(ctx, opts.Rate, func(ctx context.Context, n int) {
		if _, err := s.fetchStock(ctx, n%100); err != nil && ctx.Err() == nil {
			log.Print(err)
		}
		service.Called()
	})
	if err := srv.Shutdown(); err != nil {
		log.Fatal(err)
	}
}

// syncer reads stock levels from the upstream API through one client.
type syncer struct {
	url    string
	client *http.Client
}

// fetchStock reads one SKU's stock.
func (s *syncer) fetchStock(ctx context.Context, sku int) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/stock/%d", s.url, sku), nil)
	if err != nil {
		return 0, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return io.Copy(io.Discard, resp.Body)
}

// serveUpstream is the stock API.
func serveUpstream() {
	ln, err := upstream.Listen()
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stock/{sku}", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"sku":%q,"stock":42}`+"\n", req.PathValue("sku"))
	})
	log.Fatal((&http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}).Serve(ln))
}
