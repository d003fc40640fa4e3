// Command grpc-conn-per-call is a dependency prober: two workers take
// probe requests from a queue and ask an upstream gRPC service (another
// process, over loopback) for its health with the standard health
// service. The bug: probe dials a new grpc.ClientConn for every call and
// never closes it, so each probe leaks a whole channel: its resolver and
// balancer serializers, the HTTP/2 transport's reader, writer and
// keepalive goroutines, their buffers and the socket.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/leakscope/leakscope/samples/internal/service"
	"github.com/leakscope/leakscope/samples/libs/internal/upstream"
)

func main() {
	if upstream.Child() {
		serveUpstream()
		return
	}
	opts := service.Flags(2, "health probes per second")
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
	p := &prober{target: addr}
	queue := make(chan int, 64)
	for range 2 {
		go p.worker(ctx, queue)
	}
	http.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%d probes serving, %d failed\n", p.serving.Load(), p.failed.Load())
	})
	srv.Start()
	service.Pace(ctx, opts.Rate, func(ctx context.Context, n int) {
		select {
		case queue <- n:
		default:
		}
	})
	if err := srv.Shutdown(); err != nil {
		log.Fatal(err)
	}
}

// prober checks the upstream's health.
type prober struct {
	target          string
	serving, failed atomic.Int64
}

// worker runs each probe it takes from the queue.
func (p *prober) worker(ctx context.Context, queue <-chan int) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-queue:
			if ok, err := p.probe(ctx); err != nil || !ok {
				p.failed.Add(1)
			} else {
				p.serving.Add(1)
			}
		}
	}
}

// probe asks the upstream whether it is serving. The bug: the ClientConn
// it creates is never closed.
func (p *prober) probe(ctx context.Context) (bool, error) {
	conn, err := grpc.NewClient(p.target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return false, err
	}
	return resp.GetStatus() == healthpb.HealthCheckResponse_SERVING, nil
}

// serveUpstream is the probed service: the standard health server.
func serveUpstream() {
	ln, err := upstream.Listen()
	if err != nil {
		log.Fatal(err)
	}
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, health.NewServer())
	log.Fatal(s.Serve(ln))
}
