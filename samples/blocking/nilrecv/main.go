// Command nilrecv runs one watcher per resource; a watcher built without
// newWatcher has a nil stop channel, and its loop waits on it forever.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

type watcher struct {
	resource string
	stop     chan struct{}
}

func newWatcher(r string) *watcher { return &watcher{resource: r, stop: make(chan struct{})} }

func (w *watcher) run() {
	<-w.stop // nil channel for the literal-built watchers
}

func main() {
	ws := []*watcher{newWatcher("pods")}
	for _, r := range []string{"nodes", "leases", "events", "secrets", "configmaps"} {
		ws = append(ws, &watcher{resource: r}) // bug: stop left nil
	}
	for _, w := range ws {
		go w.run()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
	for _, w := range ws {
		if w.stop != nil {
			close(w.stop)
		}
	}
}
