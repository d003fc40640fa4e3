// Package selectnocancel: call hands a request to a backend and waits in a
// select on the reply and error channels, without ctx.Done. The backend
// drops the request, so when the caller's context ends the waiter stays.
package selectnocancel

import (
	"context"
	"sync"
	"testing"
	"time"
)

type backend struct {
	requests chan request
}

type request struct {
	reply chan string
	errc  chan error
}

func (b *backend) loop() {
	for r := range b.requests {
		_ = r // overloaded: drops the request without answering
	}
}

func await(r request, out chan<- string) {
	select { // bug: no ctx.Done case
	case v := <-r.reply:
		out <- v
	case err := <-r.errc:
		out <- err.Error()
	}
}

func call(ctx context.Context, b *backend, wg *sync.WaitGroup) string {
	r := request{reply: make(chan string), errc: make(chan error)}
	b.requests <- r
	out := make(chan string, 1)
	wg.Add(1)
	go func() { defer wg.Done(); await(r, out) }()
	select {
	case v := <-out:
		return v
	case <-ctx.Done():
		return "timeout"
	}
}

func TestCall(t *testing.T) {
	b := &backend{requests: make(chan request)}
	go b.loop()
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		t.Log(call(ctx, b, &wg))
		cancel()
	}
	wg.Wait() // waits for the abandoned waiters
}
