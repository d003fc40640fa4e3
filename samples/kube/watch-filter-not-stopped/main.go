// Command watch-filter-not-stopped is a rollout controller written against real
// client-go: rollouts are queued and reconciled by two workers, and each
// reconcile watches its pod through watch.Filter
// (k8s.io/apimachinery/pkg/watch). It returns as soon as it has seen the
// change it wants without calling Stop, so every reconcile leaks the
// filter's goroutine, parked waiting for the next event, and the fake
// clientset's watch behind it.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/leakscope/leakscope/samples/internal/service"
)

func main() {
	opts := service.Flags(10, "pod updates per second (each one is reconciled)")
	flag.Parse()
	ctx, stop := service.Context(opts.Duration)
	defer stop()
	srv, err := service.Listen(opts.Addr)
	if err != nil {
		log.Fatal(err)
	}
	// NewSimpleClientset: NewClientset's field-managed tracker rebuilds a REST
	// mapper on every write, far slower than the reconciles it serves.
	client := fake.NewSimpleClientset() //nolint:staticcheck // see above
	c := &controller{client: client, queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
	for range 2 {
		go c.worker(ctx)
	}
	http.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) { serveWork(w, r, client) })
	srv.Start()
	service.Pace(ctx, opts.Rate, func(ctx context.Context, n int) {
		c.queue.Add(touchPod(ctx, client, fmt.Sprintf("rollout-%d", n), 0))
		if n%100 == 0 {
			client.ClearActions() // the fake clientset records every action it serves (a real one keeps none)
		}
	})
	c.queue.ShutDown()
	if err := srv.Shutdown(); err != nil {
		log.Fatal(err)
	}
}

// touchPod creates the rollout's pod in namespace ns, or updates it, and
// returns its key. Every rollout has a namespace of its own, as the fake
// clientset delivers each event to every open watch of its namespace.
func touchPod(ctx context.Context, client kubernetes.Interface, ns string, gen int) string {
	pods := client.CoreV1().Pods(ns)
	p, err := pods.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		p = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}}
		_, _ = pods.Create(ctx, p, metav1.CreateOptions{})
	} else {
		p.Annotations = map[string]string{"generation": fmt.Sprint(gen)}
		_, _ = pods.Update(ctx, p, metav1.UpdateOptions{})
	}
	return ns + "/web"
}

// controller reconciles rollouts from a workqueue.
type controller struct {
	client kubernetes.Interface
	queue  workqueue.TypedRateLimitingInterface[string]
}

// worker drains the queue until it is shut down.
func (c *controller) worker(ctx context.Context) {
	for {
		key, quit := c.queue.Get()
		if quit {
			return
		}
		if err := c.reconcile(ctx, key); err != nil {
			c.queue.AddRateLimited(key)
		} else {
			c.queue.Forget(key)
		}
		c.queue.Done(key)
	}
}

// reconcile watches the rollout's pods, filtered to the one it rolls,
// until it sees it change. The bug: neither the watch nor its filter is
// ever stopped (no `defer w.Stop()`), so the filter's goroutine waits
// forever for the next event of a watch nobody reads.
func (c *controller) reconcile(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	raw, err := c.client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	w := watch.Filter(raw, func(e watch.Event) (watch.Event, bool) {
		p, ok := e.Object.(*corev1.Pod)
		return e, ok && p.Name == name
	})
	touchPod(ctx, c.client, ns, 1) // roll it
	select {
	case <-w.ResultChan():
	case <-ctx.Done():
	}
	return nil
}

// serveWork is the contract's unit of work: list the pods.
func serveWork(w http.ResponseWriter, r *http.Request, client kubernetes.Interface) {
	pods, err := client.CoreV1().Pods("").List(r.Context(), metav1.ListOptions{})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	fmt.Fprintf(w, "%d pods\n", len(pods.Items))
}
