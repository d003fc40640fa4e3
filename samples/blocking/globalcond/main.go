// Command globalcond keeps one sync.Cond per resource name in a
// package-level map; waiters wait for a resource to become ready, but
// markReady sets the flag without broadcasting. The Conds are reachable
// from a global, so the goroutineleak detector cannot prove a leak.
package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

var (
	mu     sync.Mutex
	ready  = map[string]bool{}
	conds  = map[string]*sync.Cond{}
	asleep = map[string]int{}
)

func condFor(name string) *sync.Cond {
	c, ok := conds[name]
	if !ok {
		c = sync.NewCond(&mu)
		conds[name] = c
	}
	return c
}

func waitFor(name string) {
	mu.Lock()
	defer mu.Unlock()
	for !ready[name] {
		asleep[name]++
		condFor(name).Wait()
		asleep[name]--
	}
}

func markReady(name string) {
	mu.Lock()
	defer mu.Unlock()
	ready[name] = true // bug: no condFor(name).Broadcast()
}

func waiting(name string) int {
	mu.Lock()
	defer mu.Unlock()
	return asleep[name]
}

func main() {
	for i := 0; i < 3; i++ {
		go waitFor("crd/widgets")
	}
	for waiting("crd/widgets") < 3 {
	}
	markReady("crd/widgets")
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
