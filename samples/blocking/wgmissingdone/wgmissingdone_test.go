// Package wgmissingdone: syncAll fans out one goroutine per namespace
// under a WaitGroup; a namespace that fails validation returns before
// calling Done, so syncAll waits forever (and the test waits for syncAll).
package wgmissingdone

import (
	"strings"
	"sync"
	"testing"
)

type syncer struct {
	mu     sync.Mutex
	synced []string
}

func (s *syncer) syncOne(ns string, wg *sync.WaitGroup) {
	if strings.HasPrefix(ns, "kube-") {
		return // bug: wg.Done is skipped
	}
	defer wg.Done()
	s.mu.Lock()
	s.synced = append(s.synced, ns)
	s.mu.Unlock()
}

func (s *syncer) syncAll(namespaces []string) {
	var wg sync.WaitGroup
	wg.Add(len(namespaces))
	for _, ns := range namespaces {
		go s.syncOne(ns, &wg)
	}
	wg.Wait()
}

func TestSyncAll(t *testing.T) {
	s := &syncer{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.syncAll([]string{"default", "kube-system", "apps"})
	}()
	<-done
}
