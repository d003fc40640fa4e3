// Command reconcile-no-cancel is a controller whose reconcile hands a cloud
// provisioning call to a waiter goroutine that selects on the result and
// error channels but never on ctx.Done(). When the provisioner abandons a
// slow call, the waiter is parked forever.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"sync"
	"time"

	"github.com/leakscope/leakscope/samples/internal/service"
)

// Request names the object to reconcile.
type Request struct {
	Namespace, Name string
	Generation      int64
}

// Result is what the cloud API returns for a provisioned object.
type Result struct {
	ProviderID string
	Ready      bool
}

// Provisioner simulates a slow cloud API with its own call timeout.
type Provisioner struct {
	Timeout    time.Duration
	MaxLatency time.Duration
}

// Provision calls the cloud API. A call slower than p.Timeout is abandoned
// without a reply on either channel.
func (p *Provisioner) Provision(ctx context.Context, req Request, resultCh chan<- Result, errCh chan<- error) {
	defer trace.StartRegion(ctx, "provision").End()
	latency := rand.N(p.MaxLatency)
	if latency > p.Timeout {
		time.Sleep(p.Timeout)
		return // abandoned: nobody tells the waiter
	}
	time.Sleep(latency)
	if latency < p.MaxLatency/50 {
		errCh <- errors.New("quota exceeded")
		return
	}
	sum := sha256.Sum256([]byte(req.Namespace + "/" + req.Name))
	resultCh <- Result{ProviderID: "i-" + hex.EncodeToString(sum[:6]), Ready: true}
}

// Reconciler drives objects towards their provisioned state.
type Reconciler struct {
	prov   *Provisioner
	mu     sync.Mutex
	status map[string]Result
	errors int
}

// Reconcile starts provisioning req and returns; the result is applied
// asynchronously by waitForResult.
func (r *Reconciler) Reconcile(ctx context.Context, req Request) {
	resultCh := make(chan Result, 1)
	errCh := make(chan error, 1)
	go r.prov.Provision(ctx, req, resultCh, errCh)
	go r.waitForResult(ctx, req, resultCh, errCh)
}

// waitForResult applies the provisioning outcome. Bug: no case for
// ctx.Done() and no timeout.
func (r *Reconciler) waitForResult(ctx context.Context, req Request, resultCh <-chan Result, errCh <-chan error) {
	select {
	case res := <-resultCh:
		trace.WithRegion(ctx, "apply-status", func() { r.applyStatus(req, res) })
	case err := <-errCh:
		r.mu.Lock()
		r.errors++
		r.mu.Unlock()
		trace.Logf(ctx, "reconcile", "provision %s/%s: %v", req.Namespace, req.Name, err)
	}
}

func (r *Reconciler) applyStatus(req Request, res Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status[req.Namespace+"/"+req.Name] = res
}

// event turns one informer event into a reconcile, labelled and traced.
func (r *Reconciler) event(ctx context.Context, n int) {
	req := Request{Namespace: fmt.Sprintf("team-%d", n%5), Name: fmt.Sprintf("db-%d", n%50), Generation: int64(n)}
	ctx, task := trace.NewTask(ctx, "reconcile")
	defer task.End()
	pprof.Do(ctx, pprof.Labels("controller", "database", "namespace", req.Namespace), func(ctx context.Context) {
		r.Reconcile(ctx, req)
	})
}

// serveWork renders and hashes one desired object spec.
func (r *Reconciler) serveWork(w http.ResponseWriter, req *http.Request) {
	ctx, task := trace.NewTask(req.Context(), "work")
	defer task.End()
	spec := map[string]any{"kind": "Database", "replicas": 3, "storage": "10Gi", "labels": map[string]string{"app": "db", "tier": "data"}}
	var digest string
	trace.WithRegion(ctx, "hash-spec", func() {
		b, _ := json.Marshal(spec)
		sum := sha256.Sum256(b)
		digest = hex.EncodeToString(sum[:])
	})
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"digest": digest})
}

func main() {
	o := service.Flags(20, "reconcile events per second")
	flag.Parse()
	if err := run(*o); err != nil {
		fmt.Fprintln(os.Stderr, "reconcile-no-cancel:", err)
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
	r := &Reconciler{prov: &Provisioner{Timeout: 100 * time.Millisecond, MaxLatency: 400 * time.Millisecond}, status: make(map[string]Result)}
	http.HandleFunc("/work", r.serveWork)
	srv.Start()
	service.Pace(ctx, o.Rate, r.event)
	return srv.Shutdown()
}
