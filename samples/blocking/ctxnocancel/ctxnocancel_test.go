// Package ctxnocancel: each watch starts a goroutine that stops on its
// context, but Watch derives the context with WithCancel and drops the
// cancel function, so nothing ever stops the watchers.
package ctxnocancel

import (
	"context"
	"sync"
	"testing"
)

type watcher struct {
	events chan string
	wg     sync.WaitGroup
}

func (w *watcher) watch(ctx context.Context, key string) {
	defer w.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-w.events:
			_ = key + ev
		}
	}
}

func (w *watcher) Watch(parent context.Context, key string) {
	ctx, _ := context.WithCancel(parent) // bug: cancel is dropped
	w.wg.Add(1)
	go w.watch(ctx, key)
}

func TestWatch(t *testing.T) {
	w := &watcher{events: make(chan string)}
	for _, k := range []string{"/pods", "/nodes", "/leases", "/events"} {
		w.Watch(context.Background(), k)
	}
	w.wg.Wait() // "wait for the watchers to stop"
}
