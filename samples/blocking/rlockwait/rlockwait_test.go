// Package rlockwait: a reader holds the snapshot's read lock while it
// waits on a Cond for the first load, and the loader must take the write
// lock before it can publish and signal. The reader waits for the signal,
// the signaller for the reader's RLock.
package rlockwait

import (
	"sync"
	"testing"
	"time"
)

type snapshot struct {
	rw    sync.RWMutex
	mu    sync.Mutex
	cond  *sync.Cond
	ready bool
	data  map[string]string
}

func newSnapshot() *snapshot {
	s := &snapshot{}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *snapshot) read(key string) string {
	s.rw.RLock()
	defer s.rw.RUnlock()
	s.mu.Lock()
	for !s.ready {
		s.cond.Wait() // bug: waits holding the read lock the loader needs
	}
	s.mu.Unlock()
	return s.data[key]
}

func (s *snapshot) load(data map[string]string) {
	s.rw.Lock()
	s.data = data
	s.rw.Unlock()
	s.mu.Lock()
	s.ready = true
	s.mu.Unlock()
	s.cond.Broadcast()
}

func TestRead(t *testing.T) {
	s := newSnapshot()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_ = s.read("region")
	}()
	for s.rw.TryLock() { // until the reader holds its read lock
		s.rw.Unlock()
		time.Sleep(time.Millisecond)
	}
	go func() {
		defer wg.Done()
		s.load(map[string]string{"region": "eu-west"})
	}()
	wg.Wait()
}
