// Command context-cancel-dropped is a lease cache in front of a slow
// store: every lookup runs under its own deadline, derived from the
// service's long-lived context. The bug: lookup calls the cancel function
// only on a hit, so every miss leaves its timerCtx registered in the
// service context's children (with its timer) until the service stops:
// no goroutine leaks, the heap grows with every miss.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"sync"
	"time"

	"github.com/leakscope/leakscope/samples/internal/service"
)

func main() {
	opts := service.Flags(4000, "lease lookups per second (half of them miss)")
	flag.Parse()
	ctx, stop := service.Context(opts.Duration)
	defer stop()
	srv, err := service.Listen(opts.Addr)
	if err != nil {
		log.Fatal(err)
	}
	c := &cache{ctx: ctx, leases: map[string]string{}}
	for i := range 64 {
		c.leases[fmt.Sprintf("node-%d", i)] = fmt.Sprintf("holder-%d", i%7)
	}
	http.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		v, err := c.lookup("node-1")
		fmt.Fprintf(w, "%s %v\n", v, err)
	})
	srv.Start()
	service.Pace(ctx, opts.Rate, func(ctx context.Context, n int) {
		_, _ = c.lookup(fmt.Sprintf("node-%d", n%128)) // node-64 and up are misses
	})
	if err := srv.Shutdown(); err != nil {
		log.Fatal(err)
	}
}

var errMiss = errors.New("no lease")

// cache answers lease lookups from memory.
type cache struct {
	ctx    context.Context // the service's: lives until shutdown
	mu     sync.Mutex
	leases map[string]string
}

// lookup finds the holder of a node's lease within a deadline. The bug:
// the miss path returns without calling cancel.
func (c *cache) lookup(node string) (string, error) {
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Minute)
	holder, ok := c.get(ctx, node)
	if !ok {
		return "", errMiss // cancel is never called on this path
	}
	cancel()
	return holder, nil
}

// get reads a lease unless ctx has ended.
func (c *cache) get(ctx context.Context, node string) (string, bool) {
	if ctx.Err() != nil {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.leases[node]
	return h, ok
}
