// Package subtest: the bug is in a subtest, so two test-runner frames wait
// above it: the main goroutine in T.Run for the test, and the test's own
// goroutine in T.Run for the subtest. The subtest's cache refresher holds
// the read lock while calling invalidate, which takes the write lock.
package subtest

import (
	"sync"
	"testing"
)

type cache struct {
	mu    sync.RWMutex
	stale map[string]bool
	data  map[string]string
}

func (c *cache) invalidate(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.data, k)
}

func (c *cache) refresh() {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for k := range c.stale {
		c.invalidate(k) // bug: Lock while holding RLock
	}
}

func TestCache(t *testing.T) {
	t.Run("empty", func(t *testing.T) {
		c := &cache{data: map[string]string{}}
		c.refresh()
	})
	t.Run("stale-entry", func(t *testing.T) {
		c := &cache{stale: map[string]bool{"a": true}, data: map[string]string{"a": "1"}}
		c.refresh()
	})
}
