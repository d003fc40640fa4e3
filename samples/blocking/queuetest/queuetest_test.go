// Package queuetest is healthy: a test drives a client-go-style delaying
// queue; two workers park in sync.Cond.Wait between items, and a
// producer adds an item every 300 ms until the test ends.
package queuetest

import (
	"sync"
	"testing"
	"time"
)

type workQueue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []int
	done  bool
}

func (q *workQueue) add(v int) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *workQueue) get() (int, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.done {
		q.cond.Wait()
	}
	if len(q.items) == 0 {
		return 0, false
	}
	v := q.items[0]
	q.items = q.items[1:]
	return v, true
}

func (q *workQueue) shutDown() {
	q.mu.Lock()
	q.done = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

func processItems(q *workQueue, wg *sync.WaitGroup) {
	defer wg.Done()
	for {
		if _, ok := q.get(); !ok {
			return
		}
	}
}

func TestQueue(t *testing.T) {
	q := &workQueue{}
	q.cond = sync.NewCond(&q.mu)
	var wg sync.WaitGroup
	wg.Add(2)
	go processItems(q, &wg)
	go processItems(q, &wg)
	end := time.Now().Add(10 * time.Minute)
	for i := 0; time.Now().Before(end); i++ {
		q.add(i)
		time.Sleep(300 * time.Millisecond)
	}
	q.shutDown()
	wg.Wait()
}
