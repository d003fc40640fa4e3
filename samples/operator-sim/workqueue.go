package main

import (
	"context"
	"runtime/pprof"
	"runtime/trace"
	"sync"
)

// WorkQueue is a deduplicating FIFO of keys in the style of client-go: a
// key added while queued is merged, and a key added while being processed
// is re-queued when Done is called.
type WorkQueue struct {
	mu         sync.Mutex
	cond       *sync.Cond
	queue      []string
	dirty      map[string]bool
	processing map[string]bool
	shutdown   bool
}

// NewWorkQueue returns an empty queue.
func NewWorkQueue() *WorkQueue {
	q := &WorkQueue{dirty: make(map[string]bool), processing: make(map[string]bool)}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Add enqueues key unless it is already waiting.
func (q *WorkQueue) Add(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown || q.dirty[key] {
		return
	}
	q.dirty[key] = true
	if q.processing[key] {
		return
	}
	q.queue = append(q.queue, key)
	q.cond.Signal()
}

// Get blocks until a key is available or the queue shuts down.
func (q *WorkQueue) Get() (key string, shutdown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.queue) == 0 && !q.shutdown {
		q.cond.Wait()
	}
	if len(q.queue) == 0 {
		return "", true
	}
	key, q.queue = q.queue[0], q.queue[1:]
	q.processing[key] = true
	delete(q.dirty, key)
	return key, false
}

// Done marks key processed and re-queues it if it was added meanwhile.
func (q *WorkQueue) Done(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.processing, key)
	if q.dirty[key] {
		q.queue = append(q.queue, key)
		q.cond.Signal()
	}
}

// ShutDown wakes all waiting workers; Get then reports shutdown.
func (q *WorkQueue) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shutdown = true
	q.queue = nil
	q.cond.Broadcast()
}

// Controller drains a work queue with a fixed pool of workers.
type Controller struct {
	Name    string
	Queue   *WorkQueue
	Rec     Reconciler
	Workers int
	wg      sync.WaitGroup
}

// Start launches the workers.
func (c *Controller) Start(ctx context.Context) {
	c.wg.Add(c.Workers)
	for range c.Workers {
		go c.worker(ctx)
	}
}

// worker processes keys until the queue shuts down.
func (c *Controller) worker(ctx context.Context) {
	defer c.wg.Done()
	pprof.Do(ctx, pprof.Labels("controller", c.Name), func(ctx context.Context) {
		for c.processNext(ctx) {
		}
	})
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.Queue.Get()
	if quit {
		return false
	}
	defer c.Queue.Done(key)
	ctx, task := trace.NewTask(ctx, "reconcile")
	defer task.End()
	if err := c.Rec.Reconcile(ctx, key); err != nil {
		trace.Logf(ctx, "reconcile", "%s: %v", key, err)
	}
	return true
}

// Stop shuts the queue down and waits for the workers.
func (c *Controller) Stop() {
	c.Queue.ShutDown()
	c.wg.Wait()
}
