// Command singleflight-lock-held is a config cache: lookups of a missing
// key load it once through a singleflight.Group and tell a warm-up
// logger about it. The bug: get holds the cache's mutex across
// singleflight's Do, and the callback sends on the logger's unbuffered
// channel, which nobody reads once the logger has seen its first keys:
// the next miss blocks for good holding the lock, and every later lookup
// queues on it.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/leakscope/leakscope/samples/internal/service"
)

func main() {
	opts := service.Flags(10, "config lookups per second")
	flag.Parse()
	ctx, stop := service.Context(opts.Duration)
	defer stop()
	srv, err := service.Listen(opts.Addr)
	if err != nil {
		log.Fatal(err)
	}
	c := &cache{vals: map[string]string{}, changed: make(chan string)}
	go c.warmup(ctx)
	http.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%d lookups\n", c.lookups.Load())
	})
	srv.Start()
	service.Pace(ctx, opts.Rate, func(ctx context.Context, n int) {
		c.lookupAsync(n)
		service.Called()
	})
	if err := srv.Shutdown(); err != nil {
		log.Fatal(err)
	}
}

// cache holds config values loaded on first use.
type cache struct {
	mu      sync.Mutex
	vals    map[string]string
	sf      singleflight.Group
	changed chan string
	lookups counter
}

// get returns a key's value, loading it on a miss. The bug: it holds mu
// across sf.Do, whose callback blocks on the send once warmup has
// returned.
func (c *cache) get(key string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lookups.Add(1)
	if v, ok := c.vals[key]; ok {
		return v
	}
	v, _, _ := c.sf.Do(key, func() (any, error) { return c.load(key) })
	c.vals[key] = v.(string)
	return v.(string)
}

// lookupAsync looks a flag up in the background, as a request handler
// would.
func (c *cache) lookupAsync(n int) {
	go c.get(fmt.Sprintf("flag-%d", n%50))
}

// load loads a key and tells the warm-up logger; the send blocks for
// good once the logger has returned.
func (c *cache) load(key string) (any, error) {
	c.changed <- key
	return "on", nil
}

// warmup logs the first keys loaded at start-up, then returns.
func (c *cache) warmup(ctx context.Context) {
	for range 10 {
		select {
		case <-ctx.Done():
			return
		case key := <-c.changed:
			log.Printf("warm-up: %s loaded", key)
		}
	}
}
