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
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime/trace"
	"sync"
	"time"

	"github.com/leakscope/leakscope/samples/internal/service"
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
	o := service.Flags(40, "watch events per second, spread over three kinds")
	flag.Parse()
	if err := run(*o); err != nil {
		fmt.Fprintln(os.Stderr, "operator-sim:", err)
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
	http.HandleFunc("/work", serveWork)
	srv.Start()
	go inf.resync(ctx, 15*time.Second)
	service.Pace(ctx, o.Rate, inf.event)
	err = srv.Shutdown()
	for _, c := range inf.controllers {
		c.Stop()
	}
	return err
}
