// Package controller reconciles Service objects into cloud load balancers.
package controller

import (
	"context"
	"sync"
	"time"
)

// Cloud provisions load balancers asynchronously.
type Cloud struct {
	mu      sync.Mutex
	pending map[string]chan string
}

// NewCloud returns a cloud whose provisioning never completes (an
// exhausted quota the API never reports).
func NewCloud() *Cloud { return &Cloud{pending: map[string]chan string{}} }

// EnsureLoadBalancer starts provisioning and returns the channels its
// address or error arrive on.
func (c *Cloud) EnsureLoadBalancer(name string) (<-chan string, <-chan error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	addr := make(chan string)
	c.pending[name] = addr
	return addr, make(chan error)
}

// Reconciler drives Services from a work queue.
type Reconciler struct {
	Queue chan string
	Cloud *Cloud
	done  map[string]string
	mu    sync.Mutex
}

// Start runs n workers.
func (r *Reconciler) Start(ctx context.Context, n int) {
	r.done = map[string]string{}
	for i := 0; i < n; i++ {
		go r.worker(ctx)
	}
}

func (r *Reconciler) worker(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case key := <-r.Queue:
			r.processNext(ctx, key)
		}
	}
}

func (r *Reconciler) processNext(ctx context.Context, key string) {
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if addr, err := r.reconcile(rctx, key); err == nil {
		r.mu.Lock()
		r.done[key] = addr
		r.mu.Unlock()
	}
}

func (r *Reconciler) reconcile(ctx context.Context, key string) (string, error) {
	addr, errc := r.Cloud.EnsureLoadBalancer(key)
	return r.waitForLoadBalancer(addr, errc)
}

// waitForLoadBalancer ignores the reconcile context: a load balancer that
// never comes up parks the worker for good.
func (r *Reconciler) waitForLoadBalancer(addr <-chan string, errc <-chan error) (string, error) {
	select {
	case a := <-addr:
		return a, nil
	case err := <-errc:
		return "", err
	}
}
