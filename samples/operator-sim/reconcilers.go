package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime/trace"
	"strings"
	"sync"
	"time"
)

// Object is a cluster object as the informer caches it.
type Object struct {
	Kind, Namespace, Name string
	Generation            int64
	Annotations           map[string]string
}

// Event is a recorded Kubernetes event.
type Event struct {
	Time     time.Time
	Reason   string
	Message  string
	Snapshot []byte
}

// EventRecorder records events. Bug: max is never enforced.
type EventRecorder struct {
	mu     sync.Mutex
	max    int
	events []*Event
}

// Eventf records an event about obj with a JSON snapshot of it.
func (r *EventRecorder) Eventf(obj Object, reason, format string, args ...any) {
	snap, _ := json.Marshal(obj)
	ev := &Event{Time: time.Now(), Reason: reason, Message: fmt.Sprintf(format, args...), Snapshot: snap}
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

// Cluster is the fake API server state shared by the reconcilers.
type Cluster struct {
	mu     sync.Mutex
	status map[string]string
}

func (c *Cluster) setStatus(key, s string) {
	c.mu.Lock()
	c.status[key] = s
	c.mu.Unlock()
}

// object rebuilds the cached object for a queue key "Kind/ns/name".
func object(key string) Object {
	p := strings.SplitN(key, "/", 3)
	return Object{Kind: p[0], Namespace: p[1], Name: p[2], Generation: 1,
		Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": lastApplied}}
}

var lastApplied = strings.Repeat(`{"apiVersion":"v1","spec":{"replicas":3}}`, 70)

// Reconciler reconciles one object key.
type Reconciler interface {
	Reconcile(ctx context.Context, key string) error
}

// DeploymentReconciler computes rollout status.
type DeploymentReconciler struct {
	c   *Cluster
	rec *EventRecorder
}

// Reconcile updates the deployment's status.
func (r *DeploymentReconciler) Reconcile(ctx context.Context, key string) error {
	obj := object(key)
	r.c.setStatus(key, fmt.Sprintf("available=%d", 3))
	r.rec.Eventf(obj, "ScalingReplicaSet", "scaled %s to %d", obj.Name, 3)
	return nil
}

// ConfigMapReconciler hashes config data for rollout triggers.
type ConfigMapReconciler struct {
	c   *Cluster
	rec *EventRecorder
}

// Reconcile stores the content hash of the config map.
func (r *ConfigMapReconciler) Reconcile(ctx context.Context, key string) error {
	obj := object(key)
	var sum [32]byte
	trace.WithRegion(ctx, "hash", func() {
		sum = sha256.Sum256([]byte(obj.Annotations["kubectl.kubernetes.io/last-applied-configuration"]))
	})
	r.c.setStatus(key, fmt.Sprintf("hash=%x", sum[:6]))
	r.rec.Eventf(obj, "Hashed", "config %s hashed", obj.Name)
	return nil
}

// ServiceReconciler probes a service's endpoints with a deadline.
type ServiceReconciler struct {
	c        *Cluster
	rec      *EventRecorder
	deadline time.Duration
}

// Reconcile probes endpoints and records the outcome.
func (r *ServiceReconciler) Reconcile(ctx context.Context, key string) error {
	obj := object(key)
	pctx, cancel := context.WithTimeout(ctx, r.deadline)
	defer cancel()
	out := make(chan int) // bug: unbuffered; the probe outlives the deadline
	go r.probeEndpoints(pctx, key, out)
	select {
	case ready := <-out:
		r.c.setStatus(key, fmt.Sprintf("ready=%d", ready))
		r.rec.Eventf(obj, "EndpointsReady", "%d endpoints ready", ready)
		return nil
	case <-pctx.Done():
		r.rec.Eventf(obj, "ProbeTimeout", "endpoint probe exceeded %v", r.deadline)
		return pctx.Err()
	}
}

// probeEndpoints checks endpoints (0-80 ms) and reports without watching ctx.
func (r *ServiceReconciler) probeEndpoints(ctx context.Context, key string, out chan<- int) {
	trace.WithRegion(ctx, "probe", func() { time.Sleep(rand.N(80 * time.Millisecond)) })
	out <- 1 + len(key)%3
}
