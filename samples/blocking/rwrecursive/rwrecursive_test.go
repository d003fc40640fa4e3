// Package rwrecursive: a reader holds the config's RLock and, deeper in the
// same call, takes RLock again. A writer queued in between makes the
// second RLock wait for the writer, and the writer waits for the first
// RLock: reader and writer block each other.
package rwrecursive

import (
	"sync"
	"testing"
	"time"
)

type config struct {
	mu     sync.RWMutex
	values map[string]string
}

func (c *config) get(k string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.values[k]
}

// render reads several keys under one RLock, calling get, which takes the
// RLock again.
func (c *config) render(writerQueued chan<- struct{}) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	close(writerQueued)
	for c.mu.TryRLock() { // wait until the writer is queued
		c.mu.RUnlock()
		time.Sleep(time.Millisecond)
	}
	return c.get("host") + ":" + c.get("port")
}

func (c *config) reload(v map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.values = v
}

func TestRender(t *testing.T) {
	c := &config{values: map[string]string{"host": "db", "port": "5432"}}
	started := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.render(started) }()
	go func() {
		defer wg.Done()
		<-started
		c.reload(map[string]string{"host": "db2", "port": "5432"})
	}()
	wg.Wait()
}
