// Command lockrecv has a lock ↔ channel deadlock: resolve holds the
// registry's mutex while it waits for the lookup loop's reply, and the
// lookup loop, the only sender of replies, first takes that mutex. Later
// callers of resolve queue on the mutex behind them.
package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

type registry struct {
	mu       sync.Mutex
	entries  map[string]int
	requests chan string
	replies  chan int
}

func (r *registry) resolve(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.entries[name]; ok {
		return v
	}
	r.requests <- name
	v := <-r.replies // bug: waits for the lookup loop while holding mu
	r.entries[name] = v
	return v
}

func (r *registry) lookupLoop() {
	for name := range r.requests {
		r.mu.Lock() // waits for resolve, which waits for us
		v, ok := r.entries[name]
		r.mu.Unlock()
		if !ok {
			v = len(name)
		}
		r.replies <- v
	}
}

func main() {
	r := &registry{entries: map[string]int{}, requests: make(chan string, 1), replies: make(chan int)}
	go r.lookupLoop()
	for i, name := range []string{"orders", "users", "users", "orders"} {
		go r.resolve(name)
		if i == 0 {
			time.Sleep(50 * time.Millisecond)
		}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
