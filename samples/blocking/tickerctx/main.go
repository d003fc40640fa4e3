// Command tickerctx is healthy: three periodic loops (lease renewal,
// metrics flush, cache resync) select on their ticker and on the
// process context, and stop on SIGTERM.
package main

import (
	"context"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

func every(ctx context.Context, wg *sync.WaitGroup, d time.Duration, fn func()) {
	defer wg.Done()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	var wg sync.WaitGroup
	var renewals, flushes, resyncs int
	wg.Add(3)
	go every(ctx, &wg, 2*time.Second, func() { renewals++ })
	go every(ctx, &wg, 10*time.Second, func() { flushes++ })
	go every(ctx, &wg, 30*time.Second, func() { resyncs++ })
	wg.Wait()
}
