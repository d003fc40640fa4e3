// Command condfeeder is healthy: five queue workers park in sync.Cond.Wait
// between items, and a feeder started as a closure adds an item every
// 100 ms. The feeder holds the queue only through its closure, which no
// traceback prints; the Cond's tickets climb between dumps.
package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

type queue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []int
}

func newQueue() *queue {
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) add(n int) {
	q.mu.Lock()
	q.items = append(q.items, n)
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *queue) take() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 {
		q.cond.Wait()
	}
	n := q.items[0]
	q.items = q.items[1:]
	return n
}

func (q *queue) worker(done *int64, mu *sync.Mutex) {
	for {
		n := q.take()
		mu.Lock()
		*done += int64(n)
		mu.Unlock()
	}
}

func main() {
	q := newQueue()
	var done int64
	var mu sync.Mutex
	for i := 0; i < 5; i++ {
		go q.worker(&done, &mu)
	}
	go func() {
		for n := 0; ; n++ {
			time.Sleep(100 * time.Millisecond)
			q.add(n)
		}
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
