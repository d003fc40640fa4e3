// Command oncewait blocks inside sync.Once: the client dials lazily in
// once.Do, and the dial waits for a ready signal that nobody sends (the
// discovery loop that would close it is never started). sync.Once holds
// its own mutex while the function runs, so every later caller queues on
// that mutex inside once.Do. Not a cycle: the holder is blocked on a
// channel.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

type client struct {
	once  sync.Once
	ready chan struct{}
	addr  string
}

// dial waits for discovery, then records the address.
func (c *client) dial() {
	<-c.ready // bug: discovery never runs, so ready is never closed
	c.addr = "10.0.0.1:443"
}

func (c *client) call(req string) string {
	c.once.Do(c.dial)
	return c.addr + "/" + req
}

func (c *client) handle(id int) {
	for i := 0; ; i++ {
		_ = c.call(fmt.Sprintf("req-%d-%d", id, i))
		time.Sleep(10 * time.Millisecond)
	}
}

func main() {
	c := &client{ready: make(chan struct{})}
	for id := 0; id < 4; id++ {
		go c.handle(id)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
