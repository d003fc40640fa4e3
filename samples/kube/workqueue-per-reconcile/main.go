// Command workqueue-per-reconcile is a node drainer written against
// client-go's workqueue: for each drain it queues the node's pods on a
// rate-limited workqueue and evicts them one by one. The bug: drain
// builds the queue on every call and never shuts it down, so each drain
// leaks the queue's goroutines (its delaying queue's waiting loop and
// its unfinished-work loop) and what they hold.
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

// drain evicts a node's pods through a queue of its own. The bug: the
// queue is never shut down.
func (d *drainer) drain(ctx context.Context, node string) {
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "drain"})
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
