// Package closurelock: the bug lives in closures, as in many test kernels:
// a goroutine literal takes a lock and, on its error path, returns without
// unlocking; a second goroutine literal waits for the lock, and the test
// waits on a channel for the second.
package closurelock

import (
	"errors"
	"sync"
	"testing"
)

func TestClosures(t *testing.T) {
	var mu sync.Mutex
	first := make(chan struct{})
	second := make(chan error)
	go func() {
		mu.Lock()
		if err := errors.New("quota"); err != nil {
			close(first)
			return // bug: mu stays locked
		}
		mu.Unlock()
	}()
	<-first
	go func() {
		mu.Lock()
		defer mu.Unlock()
		second <- nil
	}()
	if err := <-second; err != nil {
		t.Fatal(err)
	}
}
