// Command kubequeue is healthy: five controller workers wait in a real
// client-go workqueue (k8s.io/client-go/util/workqueue), parked in
// sync.Cond.Wait inside Get, and a resync started as a closure adds a key
// every 100 ms. The queue is reachable from the workers and from the
// closure, which no traceback prints.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/client-go/util/workqueue"
)

type controller struct {
	queue  workqueue.TypedRateLimitingInterface[string]
	synced atomic.Int64
}

func (c *controller) processNextItem() bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	c.synced.Add(1)
	c.queue.Forget(key)
	return true
}

func (c *controller) runWorker() {
	for c.processNextItem() {
	}
}

func main() {
	c := &controller{queue: workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "pods"})}
	for i := 0; i < 5; i++ {
		go c.runWorker()
	}
	go func() {
		for n := 0; ; n++ {
			time.Sleep(100 * time.Millisecond)
			c.queue.Add(fmt.Sprintf("default/pod-%d", n%20))
		}
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
	c.queue.ShutDown()
}
