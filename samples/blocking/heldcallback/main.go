// Command heldcallback holds a lock across a blocking callback: get keeps
// the cache's mutex while singleflight.Group.Do runs the loader, and the
// loader blocks sending an audit event that nobody receives (the audit
// sink is started only when configured). Every later get queues on the
// mutex. Not a cycle: the holder is blocked on something else.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/singleflight"
)

type cache struct {
	mu     sync.Mutex
	group  singleflight.Group
	vals   map[string]string
	audits chan string
}

func (c *cache) get(key string) string {
	c.mu.Lock()
	defer c.mu.Unlock() // bug: held across the loader
	if v, ok := c.vals[key]; ok {
		return v
	}
	v, _, _ := c.group.Do(key, func() (any, error) {
		c.audits <- "miss " + key // blocks: no audit sink runs
		return "value-of-" + key, nil
	})
	c.vals[key] = v.(string)
	return v.(string)
}

func (c *cache) serve(id int) {
	for i := 0; ; i++ {
		_ = c.get(fmt.Sprintf("tenant-%d", (id+i)%3))
		time.Sleep(10 * time.Millisecond)
	}
}

func main() {
	c := &cache{vals: map[string]string{}, audits: make(chan string)}
	for id := 0; id < 4; id++ {
		go c.serve(id)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
