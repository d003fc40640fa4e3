// Command waitgroup-stuck is a namespace syncer that fans out one goroutine
// per object and waits for them with a sync.WaitGroup. An object that
// fails validation returns early without calling Done, so the namespace
// goroutine waits in WaitGroup.Wait forever.
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
	"sync"

	"github.com/leakscope/leakscope/samples/internal/service"
)

// Object is a namespaced manifest to apply.
type Object struct {
	Kind, Name, Image string
	Replicas          int
}

// Syncer applies all objects of a namespace in parallel.
type Syncer struct {
	mu      sync.Mutex
	applied map[string]string
	failed  int
}

// dispatch syncs one namespace in the background.
func (s *Syncer) dispatch(ctx context.Context, ns string, objs []Object) {
	go s.syncNamespace(ctx, ns, objs)
}

// syncNamespace applies objs in parallel and waits for all of them.
func (s *Syncer) syncNamespace(ctx context.Context, ns string, objs []Object) {
	ctx, task := trace.NewTask(ctx, "sync-namespace")
	defer task.End()
	var wg sync.WaitGroup
	errs := make(chan error, len(objs))
	wg.Add(len(objs))
	for _, o := range objs {
		go s.syncObject(ctx, &wg, ns, o, errs)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		trace.Logf(ctx, "sync", "%s: %v", ns, err)
	}
}

// syncObject validates and applies one object. Bug: the validation error
// path returns before wg.Done().
func (s *Syncer) syncObject(ctx context.Context, wg *sync.WaitGroup, ns string, o Object, errs chan<- error) {
	if err := validate(o); err != nil {
		errs <- err
		s.mu.Lock()
		s.failed++
		s.mu.Unlock()
		return
	}
	trace.WithRegion(ctx, "apply", func() {
		b, _ := json.Marshal(o)
		sum := sha256.Sum256(b)
		s.mu.Lock()
		s.applied[ns+"/"+o.Name] = fmt.Sprintf("%x", sum[:6])
		s.mu.Unlock()
	})
	wg.Done()
}

func validate(o Object) error {
	if o.Image == "" {
		return fmt.Errorf("%s %s: image is required", o.Kind, o.Name)
	}
	if o.Replicas < 0 {
		return fmt.Errorf("%s %s: negative replicas", o.Kind, o.Name)
	}
	return nil
}

// manifests returns the objects of namespace n; every other namespace
// carries one object without an image.
func manifests(n int) []Object {
	objs := []Object{
		{Kind: "Deployment", Name: "api", Image: "registry/api:1.4", Replicas: 3},
		{Kind: "Deployment", Name: "worker", Image: "registry/worker:1.4", Replicas: 2},
		{Kind: "Service", Name: "api", Image: "n/a"},
	}
	if n%2 == 1 {
		objs = append(objs, Object{Kind: "CronJob", Name: "cleanup"})
	}
	return objs
}

// event syncs one namespace.
func (s *Syncer) event(ctx context.Context, n int) {
	ns := fmt.Sprintf("tenant-%d", n%100)
	pprof.Do(ctx, pprof.Labels("controller", "namespace-sync"), func(ctx context.Context) {
		s.dispatch(ctx, ns, manifests(n))
	})
}

// serveWork validates and hashes a namespace's manifests.
func serveWork(w http.ResponseWriter, r *http.Request) {
	ctx, task := trace.NewTask(r.Context(), "work")
	defer task.End()
	var sum [32]byte
	trace.WithRegion(ctx, "validate", func() {
		objs := manifests(0)
		for _, o := range objs {
			_ = validate(o)
		}
		b, _ := json.Marshal(objs)
		sum = sha256.Sum256(b)
	})
	fmt.Fprintf(w, "%x\n", sum[:8])
}

func main() {
	o := service.Flags(20, "namespace syncs per second")
	flag.Parse()
	if err := run(*o); err != nil {
		fmt.Fprintln(os.Stderr, "waitgroup-stuck:", err)
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
	s := &Syncer{applied: make(map[string]string)}
	http.HandleFunc("/work", serveWork)
	srv.Start()
	service.Pace(ctx, o.Rate, s.event)
	return srv.Shutdown()
}
