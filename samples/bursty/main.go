// Command bursty is a healthy webhook fan-out service: every half second
// it delivers a burst of notifications, one short-lived goroutine each, and
// waits for the whole burst to finish. The goroutine count spikes and
// returns to baseline, so it must not be flagged.
package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leakscope/leakscope/samples/internal/service"
)

// Notification is one webhook delivery.
type Notification struct {
	Endpoint string
	Payload  []byte
}

// Dispatcher delivers bursts of notifications in parallel.
type Dispatcher struct {
	secret    []byte
	delivered atomic.Int64
}

// sign computes the webhook signature of n.
func (d *Dispatcher) sign(n Notification) []byte {
	m := hmac.New(sha256.New, d.secret)
	m.Write([]byte(n.Endpoint))
	m.Write(n.Payload)
	return m.Sum(nil)
}

// burst delivers batch in parallel and waits for every delivery.
func (d *Dispatcher) burst(ctx context.Context, batch []Notification) {
	ctx, task := trace.NewTask(ctx, "burst")
	defer task.End()
	var wg sync.WaitGroup
	wg.Add(len(batch))
	for _, n := range batch {
		go d.deliver(ctx, &wg, n)
	}
	wg.Wait()
}

// deliver signs n and simulates a 5-50 ms HTTP round trip.
func (d *Dispatcher) deliver(ctx context.Context, wg *sync.WaitGroup, n Notification) {
	defer wg.Done()
	trace.WithRegion(ctx, "deliver", func() {
		_ = d.sign(n)
		time.Sleep(5*time.Millisecond + rand.N(45*time.Millisecond))
	})
	d.delivered.Add(1)
}

// run sends a burst of size rate/2 every 500 ms until ctx is done.
func (d *Dispatcher) run(ctx context.Context, rate float64) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		batch := make([]Notification, int(rate/2))
		for j := range batch {
			batch[j] = Notification{Endpoint: "https://hooks.example/" + strconv.Itoa(j%10), Payload: []byte(`{"event":"deploy","seq":` + strconv.Itoa(i) + `}`)}
		}
		pprof.Do(ctx, pprof.Labels("dispatcher", "webhooks"), func(ctx context.Context) {
			d.burst(ctx, batch)
		})
	}
}

// serveWork signs a small batch synchronously.
func (d *Dispatcher) serveWork(w http.ResponseWriter, r *http.Request) {
	ctx, task := trace.NewTask(r.Context(), "work")
	defer task.End()
	var sig []byte
	trace.WithRegion(ctx, "sign", func() {
		for i := range 8 {
			sig = d.sign(Notification{Endpoint: "https://hooks.example/" + strconv.Itoa(i), Payload: []byte(`{"event":"work"}`)})
		}
	})
	fmt.Fprintf(w, "%x\n", sig[:8])
}

func main() {
	o := service.Flags(400, "notifications per second, sent in bursts every 500 ms")
	flag.Parse()
	if err := run(*o); err != nil {
		fmt.Fprintln(os.Stderr, "bursty:", err)
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
	d := &Dispatcher{secret: []byte("webhook-signing-key")}
	http.HandleFunc("/work", d.serveWork)
	srv.Start()
	d.run(ctx, o.Rate)
	return srv.Shutdown()
}
