// Command informer-spawn is an informer whose event handler spawns one
// goroutine per event that first waits for the cache-synced channel. The
// channel is closed only when the initial list succeeds on the first try;
// the fake API server always throttles the first list, the retry path
// forgets to mark the cache synced, and every delivery goroutine waits
// forever.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"sync"
	"time"

	"github.com/leakscope/leakscope/samples/internal/service"
)

// Pod is the cached object.
type Pod struct {
	Namespace, Name string
	ResourceVersion int64
	Labels          map[string]string
}

// APIServer is a fake API server that throttles the first list call.
type APIServer struct {
	mu    sync.Mutex
	lists int
	pods  []Pod
}

var errTooManyRequests = errors.New("429 too many requests")

// List returns all pods; the first call fails.
func (s *APIServer) List() ([]Pod, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists++
	if s.lists == 1 {
		return nil, errTooManyRequests
	}
	return append([]Pod(nil), s.pods...), nil
}

// EventHandler receives informer notifications.
type EventHandler struct {
	synced    chan struct{}
	mu        sync.Mutex
	processed map[string]int64
}

// markSynced closes the synced channel once.
func (h *EventHandler) markSynced() { close(h.synced) }

// OnAdd is called for objects in the initial list.
func (h *EventHandler) OnAdd(ctx context.Context, p Pod) {
	go h.deliver(ctx, p)
}

// OnUpdate is called for every watch update.
func (h *EventHandler) OnUpdate(ctx context.Context, old, cur Pod) {
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	go h.deliver(ctx, cur)
}

// deliver waits for the cache to sync, then processes p. Bug: synced may
// never be closed, and nothing bounds the number of waiting deliveries.
func (h *EventHandler) deliver(ctx context.Context, p Pod) {
	<-h.synced
	trace.WithRegion(ctx, "process", func() {
		h.mu.Lock()
		h.processed[p.Namespace+"/"+p.Name] = p.ResourceVersion
		h.mu.Unlock()
	})
}

// Informer lists, then turns watch events into handler calls.
type Informer struct {
	api     *APIServer
	handler *EventHandler
	cache   map[string]Pod
}

// Sync performs the initial list with one retry.
func (inf *Informer) Sync(ctx context.Context) {
	pods, err := inf.api.List()
	if err == nil {
		inf.fill(ctx, pods)
		inf.handler.markSynced()
		return
	}
	time.Sleep(10 * time.Millisecond)
	if pods, err = inf.api.List(); err == nil {
		inf.fill(ctx, pods) // bug: markSynced is not called on this path
	}
}

func (inf *Informer) fill(ctx context.Context, pods []Pod) {
	for _, p := range pods {
		inf.cache[p.Namespace+"/"+p.Name] = p
		inf.handler.OnAdd(ctx, p)
	}
}

// event applies one watch update.
func (inf *Informer) event(ctx context.Context, n int) {
	key := fmt.Sprintf("default/web-%d", n%40)
	ctx, task := trace.NewTask(ctx, "watch-event")
	defer task.End()
	pprof.Do(ctx, pprof.Labels("informer", "pods"), func(ctx context.Context) {
		old := inf.cache[key]
		cur := Pod{Namespace: "default", Name: fmt.Sprintf("web-%d", n%40), ResourceVersion: int64(n + 1), Labels: map[string]string{"app": "web"}}
		inf.cache[key] = cur
		inf.handler.OnUpdate(ctx, old, cur)
	})
}

// serveWork decodes and indexes a pod list, as an informer cache does.
func (inf *Informer) serveWork(w http.ResponseWriter, r *http.Request) {
	ctx, task := trace.NewTask(r.Context(), "work")
	defer task.End()
	pods := make([]Pod, 20)
	for i := range pods {
		pods[i] = Pod{Namespace: "default", Name: fmt.Sprintf("web-%d", i), ResourceVersion: int64(i), Labels: map[string]string{"app": "web"}}
	}
	index := make(map[string][]string)
	trace.WithRegion(ctx, "index", func() {
		b, _ := json.Marshal(pods)
		var decoded []Pod
		_ = json.Unmarshal(b, &decoded)
		for _, p := range decoded {
			index[p.Labels["app"]] = append(index[p.Labels["app"]], p.Name)
		}
	})
	sum := sha256.Sum256([]byte(fmt.Sprint(index)))
	fmt.Fprintf(w, "%x\n", sum[:8])
}

func main() {
	o := service.Flags(20, "watch events per second")
	flag.Parse()
	if err := run(*o); err != nil {
		fmt.Fprintln(os.Stderr, "informer-spawn:", err)
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
	api := &APIServer{pods: []Pod{{Namespace: "kube-system", Name: "dns-0"}, {Namespace: "kube-system", Name: "dns-1"}}}
	inf := &Informer{api: api, cache: make(map[string]Pod),
		handler: &EventHandler{synced: make(chan struct{}), processed: make(map[string]int64)}}
	inf.Sync(ctx)
	http.HandleFunc("/work", inf.serveWork)
	srv.Start()
	service.Pace(ctx, o.Rate, inf.event)
	return srv.Shutdown()
}
