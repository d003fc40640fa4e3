// Command grpc-stream-not-cancelled is a readiness gate: two workers take
// rollout steps from a queue and, for each, open a Watch stream on the
// upstream's standard health service (another process, over loopback)
// and wait for its first status. The bug: waitServing opens the stream
// with the worker's long-lived context and returns after the first
// message without cancelling it, so every step leaks the client stream:
// grpc's goroutine that waits for the stream's context, the stream's
// buffers, and a stream held open on the shared connection.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"sync/atomic"

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
	opts := service.Flags(5, "rollout steps per second (each waits for the upstream to serve)")
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
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close() // the shared connection: created once, closed on exit
	g := &gate{health: healthpb.NewHealthClient(conn)}
	queue := make(chan int, 64)
	for range 2 {
		go g.worker(ctx, queue)
	}
	http.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%d steps passed, %d failed\n", g.passed.Load(), g.failed.Load())
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

// gate holds rollout steps until the upstream serves.
type gate struct {
	health         healthpb.HealthClient
	passed, failed atomic.Int64
}

// worker gates each step it takes from the queue.
func (g *gate) worker(ctx context.Context, queue <-chan int) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-queue:
			if err := g.waitServing(ctx); err != nil {
				g.failed.Add(1)
			} else {
				g.passed.Add(1)
			}
		}
	}
}

// waitServing watches the upstream's health until it reports SERVING.
// The bug: the stream's context is the worker's, never cancelled when
// waitServing returns.
func (g *gate) waitServing(ctx context.Context) error {
	stream, err := g.health.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return err
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			return err
		}
		if resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil // the stream stays open
		}
	}
}

// serveUpstream is the watched service: the standard health server.
func serveUpstream() {
	ln, err := upstream.Listen()
	if err != nil {
		log.Fatal(err)
	}
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, health.NewServer())
	log.Fatal(s.Serve(ln))
}
