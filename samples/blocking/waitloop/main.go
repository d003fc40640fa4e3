// Command waitloop is healthy: periodic sync loops run by
// k8s.io/apimachinery's wait.UntilWithContext and a lease renewer on a
// time.Ticker, all waiting between rounds in a select on their timer and
// the process context, which main cancels on SIGTERM.
package main

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

type cache struct{ resyncs atomic.Int64 }

func (c *cache) resync(ctx context.Context) { c.resyncs.Add(1) }

func renewLease(ctx context.Context, every time.Duration, renewed *atomic.Int64) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			renewed.Add(1)
		}
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	c := &cache{}
	for i := 0; i < 3; i++ {
		go wait.UntilWithContext(ctx, c.resync, 700*time.Millisecond)
	}
	var renewed atomic.Int64
	go renewLease(ctx, 2*time.Second, &renewed)
	<-ctx.Done()
	_ = os.Stdout.Sync()
}
