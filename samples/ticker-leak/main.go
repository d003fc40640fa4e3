// Command ticker-leak is a job controller that, per submitted job, starts a
// status poller on a time.Ticker and grants a lease that expires through
// time.AfterFunc. The poller's `break` leaves only the switch, so the
// goroutine and its ticker live forever; releasing a lease never stops its
// expiry timer, so the runtime timer heap pins every lease buffer for the
// full TTL.
package main

import (
	"context"
	"crypto/sha256"
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

// Lease reserves scratch space for a running job.
type Lease struct {
	Job     string
	Scratch []byte
	timer   *time.Timer
}

// newLease allocates a lease and its scratch buffer.
func newLease(job string, size int) *Lease {
	return &Lease{Job: job, Scratch: make([]byte, size)}
}

// LeaseManager grants leases that expire after a TTL.
type LeaseManager struct {
	mu     sync.Mutex
	ttl    time.Duration
	active map[string]*Lease
}

// Acquire grants a lease for job.
func (m *LeaseManager) Acquire(job string) *Lease {
	l := newLease(job, 32<<10)
	l.timer = time.AfterFunc(m.ttl, func() { m.expire(l) })
	m.mu.Lock()
	m.active[job] = l
	m.mu.Unlock()
	return l
}

// Release returns a lease early. Bug: l.timer.Stop() is never called, so
// the pending timer keeps l reachable until the TTL elapses.
func (m *LeaseManager) Release(l *Lease) {
	m.mu.Lock()
	delete(m.active, l.Job)
	m.mu.Unlock()
}

func (m *LeaseManager) expire(l *Lease) { m.Release(l) }

// StatusPoller polls job status until the job finishes.
type StatusPoller struct {
	interval time.Duration
	leases   *LeaseManager
	mu       sync.Mutex
	polls    map[string]int
}

// Track starts polling job.
func (p *StatusPoller) Track(ctx context.Context, job string, l *Lease) {
	go p.poll(ctx, job, l)
}

// poll checks the job on every tick. Bug: `break` exits the switch, not the
// loop, and the ticker is never stopped.
func (p *StatusPoller) poll(ctx context.Context, job string, l *Lease) {
	t := time.NewTicker(p.interval)
	for range t.C {
		switch p.fetch(ctx, job) {
		case "Succeeded", "Failed":
			p.leases.Release(l)
			//lint:ignore SA4011,S1023 the planted bug: this break leaves the switch, not the loop
			break
		}
	}
}

// fetch returns the job phase; jobs finish after two polls.
func (p *StatusPoller) fetch(ctx context.Context, job string) string {
	defer trace.StartRegion(ctx, "fetch-status").End()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.polls[job]++
	if p.polls[job] >= 2 {
		delete(p.polls, job)
		return "Succeeded"
	}
	return "Running"
}

// event submits one job.
func (p *StatusPoller) event(ctx context.Context, n int) {
	job := fmt.Sprintf("batch-%d", n)
	ctx, task := trace.NewTask(ctx, "submit-job")
	defer task.End()
	pprof.Do(ctx, pprof.Labels("controller", "jobs"), func(ctx context.Context) {
		l := p.leases.Acquire(job)
		p.Track(ctx, job, l)
	})
}

// serveWork validates and checksums a job manifest.
func serveWork(w http.ResponseWriter, r *http.Request) {
	ctx, task := trace.NewTask(r.Context(), "work")
	defer task.End()
	manifest := make([]byte, 4<<10)
	for i := range manifest {
		manifest[i] = byte('a' + i%26)
	}
	var sum [32]byte
	trace.WithRegion(ctx, "checksum", func() { sum = sha256.Sum256(manifest) })
	fmt.Fprintf(w, "%x\n", sum[:8])
}

func main() {
	o := service.Flags(10, "jobs submitted per second")
	flag.Parse()
	if err := run(*o); err != nil {
		fmt.Fprintln(os.Stderr, "ticker-leak:", err)
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
	leases := &LeaseManager{ttl: time.Hour, active: make(map[string]*Lease)}
	p := &StatusPoller{interval: 500 * time.Millisecond, leases: leases, polls: make(map[string]int)}
	http.HandleFunc("/work", serveWork)
	srv.Start()
	service.Pace(ctx, o.Rate, p.event)
	return srv.Shutdown()
}
