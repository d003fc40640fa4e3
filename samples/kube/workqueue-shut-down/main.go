// Command workqueue-shut-down is the healthy twin of
// workqueue-per-reconcile: the same node drainer, whose per-drain
// workqueue is shut down when the drain returns.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"sync/atomic"

	"k8s.io/client-go/util/workqueue"

	"github.com/leakscope/leakscope/samples/internal/service"
)

func main() {
	opts := service.Flags(10, "node drains per second")
	flag.Parse()
	ctx, stop := service.Context(opts.Duration)
	defer stop()
	srv, err := service.Listen(opts.Addr)
	if err != nil {
		log.Fatal(err)
	}
	d := &drainer{}
	http.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%d pods evicted\n", d.evicted.Load())
	})
	srv.Start()
	service.Pace(ctx, opts.Rate, func(ctx context.Context, n int) {
		d.drain(ctx, fmt.Sprintf("node-%d", n%30))
		service.Called()
	})
	if err := srv.Shutdown(); err != nil {
		log.Fatal(err)
	}
}

// drainer evicts the pods of nodes being drained.
type drainer struct{ evicted atomic.Int64 }

// drain evicts a node's pods through a queue of its own, shut down on
// return.
func (d *drainer) drain(ctx context.Context, node string) {
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "drain"})
	defer q.ShutDown()
	for i := range 3 {
		q.Add(fmt.Sprintf("%s/pod-%d", node, i))
	}
	for q.Len() > 0 && ctx.Err() == nil {
		pod, quit := q.Get()
		if quit {
			return
		}
		d.evicted.Add(1)
		q.Forget(pod)
		q.Done(pod)
	}
}
