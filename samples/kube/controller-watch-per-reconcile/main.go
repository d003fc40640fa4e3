// Command controller-watch-per-reconcile is a pod labeller written
// against controller-runtime with its fake client: an inventory feed
// sends pod events into a controller (source.Channel, as for events from
// outside the cluster) whose two workers reconcile each pod by labelling
// it with its rack. So that pods are requeued when their node goes into
// maintenance, Reconcile also watches the maintenance feed. The bug: it
// calls Watch on every reconcile instead of once before the controller
// starts, and a source added to a started controller runs until the
// controller stops, so each reconcile leaks a channel source: its sync
// loop and event-handler goroutines and a 1024-event buffer.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/leakscope/leakscope/samples/internal/service"
)

func main() {
	opts := service.Flags(10, "pod events per second from the inventory feed (each one is reconciled)")
	flag.Parse()
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := service.Context(opts.Duration)
	defer stop()
	srv, err := service.Listen(opts.Addr)
	if err != nil {
		log.Fatal(err)
	}
	var pods []client.Object
	for i := range 40 {
		pods = append(pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Namespace: "default"},
			Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i%8)}})
	}
	r := &reconciler{client: fake.NewClientBuilder().WithObjects(pods...).Build(), maintenance: make(chan event.GenericEvent)}
	ctl, err := controller.NewUnmanaged("pod-labeller", controller.Options{Reconciler: r, MaxConcurrentReconciles: 2})
	if err != nil {
		log.Fatal(err)
	}
	r.ctl = ctl
	inventory := make(chan event.GenericEvent, 64)
	if err := ctl.Watch(source.Channel(inventory, &handler.EnqueueRequestForObject{})); err != nil {
		log.Fatal(err) // the healthy source: added once, before Start
	}
	done := make(chan error, 1)
	go func() { done <- ctl.Start(ctx) }()
	http.HandleFunc("/work", func(w http.ResponseWriter, req *http.Request) { serveWork(w, req, r.client) })
	srv.Start()
	service.Pace(ctx, opts.Rate, func(ctx context.Context, n int) {
		select {
		case inventory <- event.GenericEvent{Object: pods[n%len(pods)]}:
		default: // shed when the controller falls behind
		}
	})
	if err := <-done; err != nil {
		log.Fatal(err)
	}
	if err := srv.Shutdown(); err != nil {
		log.Fatal(err)
	}
}

// reconciler labels pods with their rack.
type reconciler struct {
	client      client.Client
	ctl         controller.Controller
	maintenance chan event.GenericEvent // nodes entering maintenance
}

// Reconcile labels one pod. The bug: it adds a watch on the maintenance
// feed to the running controller on every call.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var pod corev1.Pod
	if err := r.client.Get(ctx, req.NamespacedName, &pod); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if err := r.ctl.Watch(source.Channel(r.maintenance, handler.EnqueueRequestsFromMapFunc(r.podsOnNode))); err != nil {
		return reconcile.Result{}, err
	}
	rack := "rack-" + pod.Spec.NodeName[len(pod.Spec.NodeName)-1:]
	if pod.Labels["rack"] == rack {
		return reconcile.Result{}, nil
	}
	patch := client.MergeFrom(pod.DeepCopy())
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels["rack"] = rack
	return reconcile.Result{}, r.client.Patch(ctx, &pod, patch)
}

// podsOnNode maps a node in maintenance to the pods that run on it.
func (r *reconciler) podsOnNode(ctx context.Context, node client.Object) []reconcile.Request {
	var list corev1.PodList
	if err := r.client.List(ctx, &list); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, p := range list.Items {
		if p.Spec.NodeName == node.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&p)})
		}
	}
	return out
}

// serveWork is the contract's unit of work: list the pods.
func serveWork(w http.ResponseWriter, r *http.Request, c client.Client) {
	var list corev1.PodList
	if err := c.List(r.Context(), &list); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	fmt.Fprintf(w, "%d pods\n", len(list.Items))
}
