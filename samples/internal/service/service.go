// Package service is what every sample shares: the contract's flags, a
// context that ends on SIGINT, SIGTERM or -duration, the HTTP server that
// prints the "listening on" line and serves net/http/pprof beside the
// sample's /work and Prometheus /metrics (metrics.go), and the pacing loop
// that drives the sample's events (see samples/README.md).
package service

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof" // the endpoints capture scrapes
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Options are the flags every sample takes.
type Options struct {
	Addr     string
	Rate     float64
	Duration time.Duration
}

// Flags declares -addr, -rate (with the sample's default and what one unit
// of rate is) and -duration on the command line's flag set; the options
// hold their values once the caller has run flag.Parse.
func Flags(rate float64, rateUsage string) *Options {
	o := &Options{}
	flag.StringVar(&o.Addr, "addr", "127.0.0.1:0", "listen address")
	flag.Float64Var(&o.Rate, "rate", rate, rateUsage)
	flag.DurationVar(&o.Duration, "duration", 0, "how long to run (0 = until SIGINT/SIGTERM)")
	return o
}

// Context returns a context cancelled on SIGINT or SIGTERM, or after d
// when d > 0.
func Context(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if d <= 0 {
		return ctx, stop
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	return ctx, func() { cancel(); stop() }
}

// Server serves http.DefaultServeMux: net/http/pprof, /metrics and what
// the sample registered.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	errc chan error
}

// Listen binds addr; nothing is served until Start.
func Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	return &Server{ln: ln, srv: &http.Server{ReadHeaderTimeout: 5 * time.Second}, errc: make(chan error, 1)}, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Start prints the contract's only stdout line, "listening on
// http://HOST:PORT", and serves in the background.
func (s *Server) Start() {
	fmt.Printf("listening on http://%s\n", s.ln.Addr())
	go func() { s.errc <- s.srv.Serve(s.ln) }()
}

// Shutdown stops the server started by Start, forcing it closed after 2 s.
func (s *Server) Shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	if err := <-s.errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// Pace calls fn about rate times per second, with the event's sequence
// number, until ctx is done.
func Pace(ctx context.Context, rate float64, fn func(context.Context, int)) {
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
