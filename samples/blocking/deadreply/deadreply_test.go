// Package deadreply: a client sends requests to a server loop over an
// unbuffered channel; after Stop the loop has returned, and a late call
// blocks sending its request.
package deadreply

import (
	"sync"
	"testing"
)

type call struct {
	key   string
	reply chan string
}

type server struct {
	calls chan call
	stop  chan struct{}
	done  chan struct{}
}

func (s *server) loop() {
	defer close(s.done)
	for {
		select {
		case c := <-s.calls:
			c.reply <- "value-of-" + c.key
		case <-s.stop:
			return
		}
	}
}

type client struct{ s *server }

func (c *client) get(key string) string {
	r := call{key: key, reply: make(chan string)}
	c.s.calls <- r // blocks once the loop has returned
	return <-r.reply
}

func TestLateCall(t *testing.T) {
	s := &server{calls: make(chan call), stop: make(chan struct{}), done: make(chan struct{})}
	go s.loop()
	c := &client{s}
	t.Log(c.get("a"))
	close(s.stop)
	<-s.done
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); c.get("b") }()
	wg.Wait()
}
