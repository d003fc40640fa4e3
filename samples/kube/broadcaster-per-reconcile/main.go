// Command broadcaster-per-reconcile is a pod controller written against
// real client-go that records an Event for every reconcile. It builds a
// new record.EventBroadcaster (with the worker's context) and starts
// recording to the API server in every reconcile, and never calls
// Shutdown: each reconcile leaks the broadcaster's distribution loop, its
// event watcher and the goroutine waiting for the context, and the
// broadcaster's queue.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
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
	client := fake.NewClientset()
	c := &controller{client: client, queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
	for range 2 {
		go c.worker(ctx)
	}
	http.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) { serveWork(w, r, client) })
	srv.Start()
	service.Pace(ctx, opts.Rate, func(ctx context.Context, n int) {
		c.queue.Add(fmt.Sprintf("default/web-%d", n%40))
		if n%100 == 0 {
			client.ClearActions() // the fake clientset records every action it serves (a real one keeps none)
		}
	})
	c.queue.ShutDown()
	if err := srv.Shutdown(); err != nil {
		log.Fatal(err)
	}
}

// controller reconciles pods from a workqueue.
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

// reconcile records that it saw the pod. The bug: the broadcaster is made
// per call (it belongs in the controller, made once) and never shut down.
func (c *controller) reconcile(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	events := record.NewBroadcaster(record.WithContext(ctx))
	events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.client.CoreV1().Events(ns)})
	recorder := events.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "pod-controller"})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	recorder.Eventf(pod, corev1.EventTypeNormal, "Reconciled", "reconciled %s", key)
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
