// Command lockwhilesend records events into a small buffered channel while
// holding the recorder's lock; the flusher that drains the channel takes
// the same lock first. Once the buffer is full the emitter holding the
// lock waits for the flusher, the flusher waits for the lock, and every
// other emitter queues on the lock.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

type Recorder struct {
	mu      sync.Mutex
	count   map[string]int
	pending chan string
}

func (r *Recorder) Emit(ev string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.count[ev]++
	r.pending <- ev // bug: may block while holding mu
}

func (r *Recorder) flushLoop(start <-chan struct{}) {
	<-start
	for {
		r.mu.Lock()
		n := len(r.count)
		r.mu.Unlock()
		ev := <-r.pending
		_ = fmt.Sprint(n, ev)
	}
}

func main() {
	r := &Recorder{count: map[string]int{}, pending: make(chan string, 2)}
	start := make(chan struct{})
	go r.flushLoop(start)
	for i := 0; i < 6; i++ {
		go r.Emit(fmt.Sprint("event-", i))
	}
	for len(r.pending) < cap(r.pending) || r.mu.TryLock() && unlock(&r.mu) {
	}
	close(start)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}

func unlock(mu *sync.Mutex) bool { mu.Unlock(); return true }
