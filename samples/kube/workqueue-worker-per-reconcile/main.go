// Command workqueue-worker-per-reconcile is a pod-disruption controller
// written against client-go's workqueue: each reconcile queues the
// pods of a node on a rate-limited workqueue of its own, with queue
// metrics on, and starts a worker that takes them off it. The bug:
// reconcile returns without shutting the queue down, so each reconcile
// leaks the queue's two loops (the delaying queue's waiting loop and
// the unfinished-work loop the metrics need) and the worker, parked in
// the queue's Get for an item that never comes.
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
	opts := service.Flags(10, "reconciles per second")
	flag.Parse()
	ctx, stop := service.Context(opts.Duration)
	defer stop()
	srv, err := service.Listen(opts.Addr)
	if err != nil {
		log.Fatal(err)
	}
	c := &controller{}
	http.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%d pods checked\n", c.checked.Load())
	})
	srv.Start()
	service.Pace(ctx, opts.Rate, func(ctx context.Context, n int) {
		c.reconcile(fmt.Sprintf("node-%d", n%30))
		service.Called()
	})
	if err := srv.Shutdown(); err != nil {
		log.Fatal(err)
	}
}

// controller checks the disruption budget of the pods on a node.
type controller struct {
	checked atomic.Int64
	metrics queueMetrics
}

// reconcile checks a node's pods through a queue of its own. The bug:
// the queue is never shut down.
func (c *controller) reconcile(node string) {
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "disruption", MetricsProvider: &c.metrics})
	go c.worker(q)
	for i := range 3 {
		q.Add(fmt.Sprintf("%s/pod-%d", node, i))
	}
}

// worker takes pods off the queue until it shuts down.
func (c *controller) worker(q workqueue.TypedRateLimitingInterface[string]) {
	for {
		pod, quit := q.Get()
		if quit {
			return
		}
		c.checked.Add(1)
		q.Forget(pod)
		q.Done(pod)
	}
}
