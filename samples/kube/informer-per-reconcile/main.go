// Command informer-per-reconcile is a small pod controller written against
// real client-go: a shared informer on pods feeds a rate-limited workqueue
// drained by two workers. Its reconcile starts a new SharedInformerFactory
// for the pod's namespace's ConfigMaps on every call and never closes the
// stop channel it passed to Start, so each reconcile leaks an informer:
// its reflector, processor, listener and resync goroutines, and the
// listener's ring buffer.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
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
	client := fake.NewClientset()
	c := newController(client)
	factory := informers.NewSharedInformerFactory(client, 0)
	pods := factory.Core().V1().Pods().Informer()
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
	}); err != nil {
		log.Fatal(err)
	}
	factory.Start(ctx.Done()) // the healthy informer: started once, stopped with ctx
	factory.WaitForCacheSync(ctx.Done())
	for range 2 {
		go c.worker(ctx)
	}
	http.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) { serveWork(w, r, client) })
	srv.Start()
	service.Pace(ctx, opts.Rate, func(ctx context.Context, n int) {
		touchPod(ctx, client, n)
		if n%100 == 0 {
			client.ClearActions() // the fake clientset records every action it serves (a real one keeps none)
		}
	})
	c.queue.ShutDown()
	factory.Shutdown()
	if err := srv.Shutdown(); err != nil {
		log.Fatal(err)
	}
}

// touchPod creates or updates one of a few dozen pods.
func touchPod(ctx context.Context, client kubernetes.Interface, n int) {
	name := fmt.Sprintf("web-%d", n%40)
	pods := client.CoreV1().Pods("default")
	p, err := pods.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		p = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
		_, _ = pods.Create(ctx, p, metav1.CreateOptions{})
		return
	}
	p.Annotations = map[string]string{"generation": fmt.Sprint(n)}
	_, _ = pods.Update(ctx, p, metav1.UpdateOptions{})
}

// controller reconciles pods from a workqueue.
type controller struct {
	client kubernetes.Interface
	queue  workqueue.TypedRateLimitingInterface[string]
}

func newController(client kubernetes.Interface) *controller {
	return &controller{client: client, queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
}

func (c *controller) enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
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

// reconcile looks up the ConfigMaps of the pod's namespace. The bug: it
// builds and starts a new informer factory on every call and never
// closes the stop channel passed to Start.
func (c *controller) reconcile(ctx context.Context, key string) error {
	ns, _, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	factory := informers.NewSharedInformerFactoryWithOptions(c.client, time.Minute, informers.WithNamespace(ns))
	cms := factory.Core().V1().ConfigMaps()
	if _, err := cms.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { c.queue.Add(key) },
	}); err != nil {
		return err
	}
	stopCh := make(chan struct{}) // never closed
	factory.Start(stopCh)
	if !cache.WaitForCacheSync(ctx.Done(), cms.Informer().HasSynced) {
		return ctx.Err()
	}
	_, err = cms.Lister().ConfigMaps(ns).List(labels.Everything())
	return err
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
