// Command waitgroup-stuck is a namespace syncer that fans out one goroutine
// per object and waits for them with a sync.WaitGroup. An object that
// fails validation returns early without calling Done, so the namespace
// goroutine waits in WaitGroup.Wait forever.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"runtime/pprof"
	"runtime/trace"
	"sync"
	"syscall"
	"time"
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
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	rate := flag.Float64("rate", 20, "namespace syncs per second")
	duration := flag.Duration("duration", 0, "how long to run (0 = until SIGINT/SIGTERM)")
	flag.Parse()
	if err := run(*addr, *rate, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "waitgroup-stuck:", err)
		os.Exit(1)
	}
}

func run(addr string, rate float64, duration time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, duration)
		defer cancel()
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	s := &Syncer{applied: make(map[string]string)}
	http.HandleFunc("/work", serveWork)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	pace(ctx, rate, s.event)
	return shutdown(srv, errc)
}

// pace calls fn about rate times per second until ctx is done.
func pace(ctx context.Context, rate float64, fn func(context.Context, int)) {
	if rate <= 0 {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(max(10*time.Millisecond, time.Duration(float64(time.Second)/rate)))
	defer t.Stop()
	start, n := time.Now(), 0
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for due := int(now.Sub(start).Seconds() * rate); n < due; n++ {
				fn(ctx, n)
			}
		}
	}
}

// shutdown stops the HTTP server, forcing it closed after 2 s.
func shutdown(srv *http.Server, errc <-chan error) error {
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
