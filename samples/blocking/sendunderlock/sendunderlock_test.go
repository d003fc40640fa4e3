// Package sendunderlock: the status manager holds its mutex while it sends
// an update on an unbuffered channel; the sync loop that receives updates
// first takes the same mutex. Sender waits for the receiver, the receiver
// waits for the lock: a channel and a mutex in one cycle.
package sendunderlock

import (
	"sync"
	"testing"
	"time"
)

type manager struct {
	mu       sync.Mutex
	statuses map[string]string
	updates  chan string
}

func (m *manager) setStatus(pod, status string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.statuses[pod] = status
	m.updates <- pod // bug: sends while holding mu
}

func (m *manager) syncLoop(ready chan<- struct{}) {
	close(ready)
	for {
		m.mu.Lock() // waits for setStatus, which waits for us
		n := len(m.statuses)
		m.mu.Unlock()
		_ = n
		<-m.updates
	}
}

func TestSetStatus(t *testing.T) {
	m := &manager{statuses: map[string]string{}, updates: make(chan string)}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		m.setStatus("pod-1", "Running")
	}()
	for m.mu.TryLock() { // until setStatus holds the lock
		m.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	ready := make(chan struct{})
	go m.syncLoop(ready)
	<-ready
	wg.Wait()
}
