// Command operator-sim simulates a controller-runtime style operator: a
// fake informer feeds deduplicating work queues drained by fixed worker
// pools, and three reconcilers handle Deployments, Services and ConfigMaps.
// Most of the machinery is healthy; two leaks are planted: the Service
// reconciler abandons endpoint probes that then block sending their result,
// and the event recorder keeps every event forever.
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
	"runtime/trace"
	"sync"
	"syscall"
	"time"
)

// Informer turns fake watch events into queue keys and resyncs
// periodically.
type Informer struct {
	controllers []*Controller
	mu          sync.Mutex
	known       map[string]*Controller
}

// event delivers one watch event to the controller owning its kind.
func (inf *Informer) event(ctx context.Context, n int) {
	c := inf.controllers[n%len(inf.controllers)]
	key := fmt.Sprintf("%s/ns-%d/obj-%d", c.Name, n%4, (n/len(inf.controllers))%50)
	trace.Log(ctx, "watch-event", key)
	inf.mu.Lock()
	inf.known[key] = c
	inf.mu.Unlock()
	c.Queue.Add(key)
}

// resync re-queues every known key each period until ctx is done.
func (inf *Informer) resync(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		tctx, task := trace.NewTask(ctx, "resync")
		inf.mu.Lock()
		for key, c := range inf.known {
			c.Queue.Add(key)
		}
		trace.Logf(tctx, "resync", "%d keys", len(inf.known))
		inf.mu.Unlock()
		task.End()
	}
}

// serveWork reconciles a desired object in memory, as an admission webhook
// would: decode, default, hash.
func serveWork(w http.ResponseWriter, r *http.Request) {
	ctx, task := trace.NewTask(r.Context(), "work")
	defer task.End()
	var sum [32]byte
	trace.WithRegion(ctx, "default", func() {
		obj := object("Deployment/default/web")
		b, _ := json.Marshal(obj)
		var decoded Object
		_ = json.Unmarshal(b, &decoded)
		decoded.Generation++
		b, _ = json.Marshal(decoded)
		sum = sha256.Sum256(b)
	})
	fmt.Fprintf(w, "%x\n", sum[:8])
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	rate := flag.Float64("rate", 40, "watch events per second, spread over three kinds")
	duration := flag.Duration("duration", 0, "how long to run (0 = until SIGINT/SIGTERM)")
	flag.Parse()
	if err := run(*addr, *rate, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "operator-sim:", err)
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
	cl := &Cluster{status: make(map[string]string)}
	rec := &EventRecorder{max: 1000}
	inf := &Informer{known: make(map[string]*Controller), controllers: []*Controller{
		{Name: "Deployment", Queue: NewWorkQueue(), Rec: &DeploymentReconciler{c: cl, rec: rec}, Workers: 4},
		{Name: "Service", Queue: NewWorkQueue(), Rec: &ServiceReconciler{c: cl, rec: rec, deadline: 20 * time.Millisecond}, Workers: 4},
		{Name: "ConfigMap", Queue: NewWorkQueue(), Rec: &ConfigMapReconciler{c: cl, rec: rec}, Workers: 2},
	}}
	for _, c := range inf.controllers {
		c.Start(ctx)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	http.HandleFunc("/work", serveWork)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	go inf.resync(ctx, 15*time.Second)
	pace(ctx, rate, inf.event)
	err = shutdown(srv, errc)
	for _, c := range inf.controllers {
		c.Stop()
	}
	return err
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
