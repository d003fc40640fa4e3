// Command watch-not-stopped is a rollout controller that, for every
// rollout, opens a watch on the store and reads it until its deployment
// reports ready, then returns without stopping the watch. The watch's
// producer goroutine stays blocked sending the next event on the
// unbuffered result channel.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"sort"
	"sync"

	"github.com/leakscope/leakscope/samples/internal/service"
)

// Event is one watch notification.
type Event struct {
	Type  string // ADDED, MODIFIED or BOOKMARK
	Key   string
	Ready bool
}

// Store is an in-memory object store with watches.
type Store struct {
	mu    sync.Mutex
	ready map[string]bool
}

// Watcher streams events; callers must call Stop when done.
type Watcher struct {
	result chan Event
	stopCh chan struct{}
	once   sync.Once
}

// ResultChan returns the event stream.
func (w *Watcher) ResultChan() <-chan Event { return w.result }

// Stop ends the watch.
func (w *Watcher) Stop() { w.once.Do(func() { close(w.stopCh) }) }

// Watch starts a watch that replays the current objects, then a bookmark.
func (s *Store) Watch(ctx context.Context) *Watcher {
	s.mu.Lock()
	snapshot := make([]Event, 0, len(s.ready)+1)
	for k, r := range s.ready {
		snapshot = append(snapshot, Event{Type: "ADDED", Key: k, Ready: r})
	}
	s.mu.Unlock()
	sort.Slice(snapshot, func(i, j int) bool { return snapshot[i].Key < snapshot[j].Key })
	snapshot = append(snapshot, Event{Type: "BOOKMARK"})
	w := &Watcher{result: make(chan Event), stopCh: make(chan struct{})}
	go w.pump(ctx, snapshot)
	return w
}

// pump sends the snapshot. It checks stopCh only between sends, so a plain
// send blocks forever once the reader has gone away.
func (w *Watcher) pump(ctx context.Context, snapshot []Event) {
	defer close(w.result)
	for _, ev := range snapshot {
		select {
		case <-w.stopCh:
			return
		default:
		}
		w.result <- ev
	}
}

// Update stores the readiness of key.
func (s *Store) Update(key string, ready bool) {
	s.mu.Lock()
	s.ready[key] = ready
	s.mu.Unlock()
}

// RolloutController waits for deployments to become ready.
type RolloutController struct {
	store *Store
}

// waitReady reads the watch until key is ready. Bug: returns without
// w.Stop(), and a stop would not unblock the pending send anyway.
func (c *RolloutController) waitReady(ctx context.Context, key string) bool {
	w := c.store.Watch(ctx)
	for ev := range w.ResultChan() {
		if ev.Key == key && ev.Ready {
			return true
		}
	}
	return false
}

// event rolls out one deployment.
func (c *RolloutController) event(ctx context.Context, n int) {
	key := fmt.Sprintf("prod/api-%02d", n%30)
	ctx, task := trace.NewTask(ctx, "rollout")
	defer task.End()
	pprof.Do(ctx, pprof.Labels("controller", "rollout"), func(ctx context.Context) {
		c.store.Update(key, true)
		if !c.waitReady(ctx, key) {
			trace.Logf(ctx, "rollout", "%s never became ready", key)
		}
	})
}

// serveWork renders a rollout plan.
func serveWork(w http.ResponseWriter, r *http.Request) {
	ctx, task := trace.NewTask(r.Context(), "work")
	defer task.End()
	plan := make([]map[string]any, 10)
	for i := range plan {
		plan[i] = map[string]any{"step": i, "weight": (i + 1) * 10, "pause": "30s"}
	}
	var sum [32]byte
	trace.WithRegion(ctx, "render-plan", func() {
		b, _ := json.Marshal(plan)
		sum = sha256.Sum256(b)
	})
	fmt.Fprintf(w, "%x\n", sum[:8])
}

func main() {
	o := service.Flags(15, "rollouts per second")
	flag.Parse()
	if err := run(*o); err != nil {
		fmt.Fprintln(os.Stderr, "watch-not-stopped:", err)
		os.Exit(1)
	}
}

func run(o service.Options) error {
	ctx, stop := service.Context(o.Duration)
	defer stop()
	srv, err := service.Listen(o.Addr)
	if err != nil {
		return err
	}
	c := &RolloutController{store: &Store{ready: make(map[string]bool)}}
	http.HandleFunc("/work", serveWork)
	srv.Start()
	service.Pace(ctx, o.Rate, c.event)
	return srv.Shutdown()
}
