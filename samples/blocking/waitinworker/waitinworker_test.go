// Package waitinworker: a worker waits on the WaitGroup that also counts
// the worker itself (to "wait for its siblings" before flushing), so the
// count can never reach zero; the other workers finish, the flushers and
// the test wait forever.
package waitinworker

import (
	"sync"
	"testing"
)

type pool struct {
	wg      sync.WaitGroup
	mu      sync.Mutex
	results []int
}

func (p *pool) worker(id int, flush bool) {
	defer p.wg.Done()
	p.mu.Lock()
	p.results = append(p.results, id*id)
	p.mu.Unlock()
	if flush {
		p.wg.Wait() // bug: waits for itself
	}
}

func TestPool(t *testing.T) {
	p := &pool{}
	for i := 0; i < 4; i++ {
		p.wg.Add(1)
		go p.worker(i, i == 0)
	}
	p.wg.Wait()
}
