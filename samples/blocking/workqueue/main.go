// Command workqueue is healthy: a client-go-style work queue whose four
// workers park in sync.Cond.Wait inside Get until an item is added; a
// resync adds an item every two seconds.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

type Queue struct {
	mu           sync.Mutex
	cond         *sync.Cond
	items        []string
	shuttingDown bool
}

func NewQueue() *Queue {
	q := &Queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *Queue) Add(it string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = append(q.items, it)
	q.cond.Signal()
}

func (q *Queue) Get() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.shuttingDown {
		q.cond.Wait()
	}
	if len(q.items) == 0 {
		return "", false
	}
	it := q.items[0]
	q.items = q.items[1:]
	return it, true
}

func (q *Queue) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shuttingDown = true
	q.cond.Broadcast()
}

func runWorker(q *Queue) {
	for {
		it, ok := q.Get()
		if !ok {
			return
		}
		_ = len(it)
	}
}

func resync(q *Queue, stop <-chan struct{}) {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-t.C:
			q.Add(fmt.Sprint("default/obj-", i))
		}
	}
}

func main() {
	q := NewQueue()
	for i := 0; i < 4; i++ {
		go runWorker(q)
	}
	stop := make(chan struct{})
	go resync(q, stop)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
	close(stop)
	q.ShutDown()
}
