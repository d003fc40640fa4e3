// Package notsynced: handlers wait for the informer's synced channel, but
// the informer's error path returns without closing it.
package notsynced

import (
	"errors"
	"sync"
	"testing"
)

type informer struct {
	synced chan struct{}
}

func (i *informer) run(list func() error) {
	if err := list(); err != nil {
		return // bug: synced is never closed
	}
	close(i.synced)
}

func (i *informer) waitSynced() {
	<-i.synced
}

func TestHandlers(t *testing.T) {
	inf := &informer{synced: make(chan struct{})}
	go inf.run(func() error { return errors.New("forbidden") })
	var wg sync.WaitGroup
	for h := 0; h < 2; h++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inf.waitSynced()
		}()
	}
	wg.Wait()
}
