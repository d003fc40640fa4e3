// Package earlyreturn: Register returns early on a duplicate name without
// unlocking, so the next Register, in the test goroutine itself, blocks.
package earlyreturn

import (
	"errors"
	"sync"
	"testing"
)

type registry struct {
	mu    sync.Mutex
	names map[string]bool
}

func (r *registry) Register(name string) error {
	r.mu.Lock()
	if r.names[name] {
		return errors.New("duplicate " + name) // the mutex stays locked
	}
	r.names[name] = true
	r.mu.Unlock()
	return nil
}

func TestRegister(t *testing.T) {
	r := &registry{names: map[string]bool{}}
	for _, n := range []string{"pods", "nodes", "pods", "services"} {
		if err := r.Register(n); err != nil {
			t.Log(err)
		}
	}
}
