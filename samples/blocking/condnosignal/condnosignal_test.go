// Package condnosignal: a queue's consumers wait on a sync.Cond until items
// arrive; Put appends but forgets to Signal, so the consumers sleep on.
package condnosignal

import (
	"sync"
	"testing"
	"time"
)

type queue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	items   []string
	waiters int
}

func newQueue() *queue {
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) get() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 {
		q.waiters++
		q.cond.Wait()
		q.waiters--
	}
	it := q.items[0]
	q.items = q.items[1:]
	return it
}

func (q *queue) put(it string) {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.mu.Unlock() // bug: no q.cond.Signal()
}

func TestQueue(t *testing.T) {
	q := newQueue()
	got := make(chan string)
	go func() { got <- q.get() }()
	for !q.hasWaiter() {
		time.Sleep(time.Millisecond)
	}
	q.put("job-1")
	t.Log(<-got)
}

func (q *queue) hasWaiter() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiters > 0
}
