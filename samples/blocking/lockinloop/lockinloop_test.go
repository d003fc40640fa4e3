// Package lockinloop: a batcher locks at the top of each loop iteration
// and unlocks at the bottom, but the skip branch continues without
// unlocking; the next iteration locks again and blocks on itself.
package lockinloop

import (
	"sync"
	"testing"
)

type batcher struct {
	mu      sync.Mutex
	pending []string
	flushed int
}

func (b *batcher) run(items []string, done chan<- struct{}) {
	defer close(done)
	for _, it := range items {
		b.mu.Lock()
		if it == "" {
			continue // bug: the mutex stays locked
		}
		b.pending = append(b.pending, it)
		if len(b.pending) >= 2 {
			b.flushed += len(b.pending)
			b.pending = b.pending[:0]
		}
		b.mu.Unlock()
	}
}

func TestBatch(t *testing.T) {
	b := &batcher{}
	done := make(chan struct{})
	go b.run([]string{"a", "", "b", "c"}, done)
	<-done
}
