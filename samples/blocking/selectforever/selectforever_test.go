// Package selectforever: a fake server's Serve ends in an empty select to
// "wait for shutdown"; Stop has nothing to wake it, so the test's wait for
// Serve to return never ends.
package selectforever

import (
	"sync"
	"testing"
)

type server struct {
	started chan struct{}
	stopped bool
}

func (s *server) Serve() {
	close(s.started)
	select {} // intended: wait for Stop
}

func (s *server) Stop() { s.stopped = true }

func TestServeStop(t *testing.T) {
	s := &server{started: make(chan struct{})}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.Serve()
	}()
	<-s.started
	s.Stop()
	wg.Wait()
}
