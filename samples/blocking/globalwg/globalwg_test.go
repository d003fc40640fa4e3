// Package globalwg: in-flight requests are counted in a package-level
// WaitGroup; the cancel path of serve forgets Done, so drain (run by the
// shutdown goroutine) never returns. The WaitGroup is reachable from a
// global: the goroutineleak detector cannot prove the drain leaked.
package globalwg

import (
	"sync"
	"testing"
)

var inflight sync.WaitGroup

func serve(cancelled bool) {
	inflight.Add(1)
	if cancelled {
		return // bug: inflight.Done is skipped
	}
	defer inflight.Done()
}

func drain(done chan<- struct{}) {
	inflight.Wait()
	close(done)
}

func TestShutdown(t *testing.T) {
	serve(false)
	serve(true)
	serve(false)
	done := make(chan struct{})
	go drain(done)
	<-done
}
