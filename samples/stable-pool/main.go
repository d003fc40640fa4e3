// Command stable-pool is a healthy image-digest service with a large but
// fixed worker pool: 500 workers parked on a job channel, started once at
// startup. The goroutine count is high but constant, so it must not be
// flagged as a leak.
package main

import (
	"context"
	"crypto/sha256"
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
	"strconv"
	"sync"
	"syscall"
	"time"
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
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	rate := flag.Float64("rate", 200, "jobs per second")
	workers := flag.Int("workers", 500, "pool size")
	duration := flag.Duration("duration", 0, "how long to run (0 = until SIGINT/SIGTERM)")
	flag.Parse()
	if err := run(*addr, *rate, *workers, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "stable-pool:", err)
		os.Exit(1)
	}
}

func run(addr string, rate float64, workers int, duration time.Duration) error {
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
	p := NewPool(context.Background(), workers)
	fmt.Printf("listening on http://%s\n", ln.Addr())
	http.HandleFunc("/work", p.serveWork)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	pace(ctx, rate, p.event)
	err = shutdown(srv, errc)
	p.Close()
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
