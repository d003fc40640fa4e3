// Package globalchan: audit events go to a package-level unbuffered
// channel whose consumer was never started in this code path. Emitters
// block on send; the channel is reachable from a global, so the runtime's
// goroutineleak detector does not report them.
package globalchan

import (
	"sync"
	"testing"
)

var auditEvents = make(chan string)

func emit(ev string) { auditEvents <- ev }

func handle(user string, wg *sync.WaitGroup) {
	defer wg.Done()
	emit("login " + user)
}

func TestAudit(t *testing.T) {
	var wg sync.WaitGroup
	for _, u := range []string{"alice", "bob"} {
		wg.Add(1)
		go handle(u, &wg)
	}
	wg.Wait()
}
