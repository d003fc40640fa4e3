// Package lostsignal: a latch signals its Cond before the waiter has begun
// waiting, and the waiter waits without checking a condition first, so
// the only wakeup is lost.
package lostsignal

import (
	"sync"
	"testing"
)

type latch struct {
	mu   sync.Mutex
	cond *sync.Cond
}

func (l *latch) release() {
	l.mu.Lock()
	l.cond.Signal() // nobody waits yet
	l.mu.Unlock()
}

func (l *latch) await() {
	l.mu.Lock()
	l.cond.Wait() // bug: no predicate, the signal already happened
	l.mu.Unlock()
}

func TestLatch(t *testing.T) {
	l := &latch{}
	l.cond = sync.NewCond(&l.mu)
	released := make(chan struct{})
	go func() { l.release(); close(released) }()
	<-released
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); l.await() }()
	wg.Wait()
}
