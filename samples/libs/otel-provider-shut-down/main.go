// Command otel-provider-shut-down is the healthy twin of
// otel-provider-per-request: the same checkout API, whose per-request
// TracerProvider is shut down (flushing its batch processor) before the
// request returns.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/leakscope/leakscope/samples/internal/service"
)

func main() {
	opts := service.Flags(10, "checkout requests per second")
	flag.Parse()
	ctx, stop := service.Context(opts.Duration)
	defer stop()
	srv, err := service.Listen(opts.Addr)
	if err != nil {
		log.Fatal(err)
	}
	a := &api{exporter: &discard{}}
	http.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%d spans exported\n", a.exporter.spans.Load())
	})
	srv.Start()
	service.Pace(ctx, opts.Rate, func(ctx context.Context, n int) {
		a.handle(ctx, fmt.Sprintf("tenant-%d", n%20), n)
		service.Called()
	})
	if err := srv.Shutdown(); err != nil {
		log.Fatal(err)
	}
}

// api serves checkouts and traces each one.
type api struct{ exporter *discard }

// handle runs one checkout under a span, with a provider shut down on
// return.
func (a *api) handle(ctx context.Context, tenant string, n int) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(a.exporter))
	defer func() { _ = tp.Shutdown(context.WithoutCancel(ctx)) }()
	_, span := tp.Tracer("checkout").Start(ctx, "checkout")
	span.SetAttributes(attribute.String("tenant", tenant), attribute.Int("order", n))
	span.End()
}
