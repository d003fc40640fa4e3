// Command stable-pool is a healthy image-digest service with a large but
// fixed worker pool: 500 workers parked on a job channel, started once at
// startup. The goroutine count is high but constant, so it must not be
// flagged as a leak.
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
	"strconv"
	"sync"

	"github.com/leakscope/leakscope/samples/internal/service"
)

// Job asks for the digest of one image layer.
type Job struct {
	ctx   context.Context
	Layer string
	Size  int
	reply chan<- [32]byte // nil for fire-and-forget jobs
}

// Pool is a fixed set of workers fed through one channel.
type Pool struct {
	jobs    chan Job
	wg      sync.WaitGroup
	mu      sync.Mutex
	digests map[string][32]byte
}

// NewPool starts n workers.
func NewPool(ctx context.Context, n int) *Pool {
	p := &Pool{jobs: make(chan Job, 64), digests: make(map[string][32]byte)}
	p.wg.Add(n)
	for i := range n {
		pprof.Do(ctx, pprof.Labels("pool", "digest", "worker", strconv.Itoa(i%8)), func(ctx context.Context) {
			p.spawn(ctx)
		})
	}
	return p
}

// spawn starts one worker.
func (p *Pool) spawn(ctx context.Context) { go p.worker(ctx) }

// worker processes jobs until the channel is closed.
func (p *Pool) worker(ctx context.Context) {
	defer p.wg.Done()
	for job := range p.jobs {
		p.process(job)
	}
}

// process hashes a synthetic layer.
func (p *Pool) process(job Job) {
	ctx, task := trace.NewTask(job.ctx, "digest")
	defer task.End()
	var sum [32]byte
	trace.WithRegion(ctx, "hash", func() {
		buf := make([]byte, job.Size)
		for i := range buf {
			buf[i] = byte(i)
		}
		sum = sha256.Sum256(buf)
	})
	p.mu.Lock()
	p.digests[job.Layer] = sum
	p.mu.Unlock()
	if job.reply != nil {
		job.reply <- sum
	}
}

// Close stops the workers and waits for them.
func (p *Pool) Close() {
	close(p.jobs)
	p.wg.Wait()
}

// event submits one background job.
func (p *Pool) event(ctx context.Context, n int) {
	p.jobs <- Job{ctx: ctx, Layer: "sha256:layer-" + strconv.Itoa(n%200), Size: 4 << 10}
}

// serveWork digests one layer through the pool and waits for the answer.
func (p *Pool) serveWork(w http.ResponseWriter, r *http.Request) {
	reply := make(chan [32]byte, 1)
	select {
	case p.jobs <- Job{ctx: r.Context(), Layer: "sha256:adhoc", Size: 4 << 10, reply: reply}:
	case <-r.Context().Done():
		return
	}
	sum := <-reply
	fmt.Fprintf(w, "%x\n", sum[:8])
}

func main() {
	o := service.Flags(200, "jobs per second")
	workers := flag.Int("workers", 500, "pool size")
	flag.Parse()
	if err := run(*o, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "stable-pool:", err)
		os.Exit(1)
	}
}

func run(o service.Options, workers int) error {
	ctx, stop := service.Context(o.Duration)
	defer stop()
	srv, err := service.Listen(o.Addr)
	if err != nil {
		return err
	}
	p := NewPool(context.Background(), workers)
	http.HandleFunc("/work", p.serveWork)
	srv.Start()
	service.Pace(ctx, o.Rate, p.event)
	err = srv.Shutdown()
	p.Close()
	return err
}
