// Command broadcaster is healthy: config watchers wait on a sync.Cond for
// the next version; the loader broadcasts a new version five times a
// second, so the watchers wake and park again at the same line.
package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

type store struct {
	mu      sync.Mutex
	cond    *sync.Cond
	version int
}

func (s *store) waitNewer(v int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.version <= v {
		s.cond.Wait()
	}
	return s.version
}

func (s *store) watcher() {
	v := 0
	for {
		v = s.waitNewer(v)
	}
}

func (s *store) load() {
	for {
		time.Sleep(200 * time.Millisecond)
		s.mu.Lock()
		s.version++
		s.cond.Broadcast()
		s.mu.Unlock()
	}
}

func main() {
	s := &store{}
	s.cond = sync.NewCond(&s.mu)
	for i := 0; i < 5; i++ {
		go s.watcher()
	}
	go s.load()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
