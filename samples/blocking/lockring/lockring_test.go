// Package lockring: three replicas each lock themselves and then their
// successor in the ring (r0→r1, r1→r2, r2→r0): a three-way lock-order cycle.
package lockring

import (
	"sync"
	"testing"
)

type replica struct {
	id   int
	mu   sync.Mutex
	next *replica
	term int
}

func (r *replica) propagate(held *sync.WaitGroup) {
	r.mu.Lock()
	defer r.mu.Unlock()
	held.Done()
	held.Wait()
	r.next.adopt(r.term)
}

func (r *replica) adopt(term int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if term > r.term {
		r.term = term
	}
}

func TestPropagate(t *testing.T) {
	rs := []*replica{{id: 0, term: 3}, {id: 1, term: 1}, {id: 2, term: 2}}
	for i, r := range rs {
		r.next = rs[(i+1)%len(rs)]
	}
	var held, done sync.WaitGroup
	held.Add(len(rs))
	done.Add(len(rs))
	for _, r := range rs {
		go func() {
			defer done.Done()
			r.propagate(&held)
		}()
	}
	done.Wait()
}
