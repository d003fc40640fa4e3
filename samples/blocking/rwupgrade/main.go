// Command rwupgrade is a lookup cache whose miss path "upgrades" its read
// lock: it holds RLock and calls Lock to fill the entry. The writer waits
// for its own reader, and every later reader queues behind the writer.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

type Cache struct {
	mu      sync.RWMutex
	entries map[string]string
}

func (c *Cache) getOrFill(key string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if v, ok := c.entries[key]; ok {
		return v
	}
	c.mu.Lock() // bug: upgrade while holding RLock
	defer c.mu.Unlock()
	v := fmt.Sprintf("resolved-%s", key)
	c.entries[key] = v
	return v
}

func (c *Cache) get(key string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.entries[key]
}

func main() {
	c := &Cache{entries: map[string]string{"a": "1"}}
	fmt.Println(c.getOrFill("a"))
	go c.getOrFill("b")
	for c.mu.TryRLock() { // until the writer is queued
		c.mu.RUnlock()
	}
	for i := 0; i < 8; i++ {
		go c.get(fmt.Sprint("k", i))
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
