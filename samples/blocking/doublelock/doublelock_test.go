// Package doublelock: a store's Update holds its mutex and calls validate,
// which takes the same mutex again. sync.Mutex is not reentrant, so the
// updating goroutine blocks on itself.
package doublelock

import (
	"sync"
	"testing"
)

type store struct {
	mu    sync.Mutex
	items map[string]int
}

func (s *store) validate(key string) bool {
	s.mu.Lock() // already held by Update
	defer s.mu.Unlock()
	_, dup := s.items[key]
	return !dup
}

func (s *store) Update(key string, v int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.validate(key) {
		s.items[key] = v
	}
}

func TestUpdate(t *testing.T) {
	s := &store{items: map[string]int{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Update("a", 1)
	}()
	<-done
}
