// Command errgroup-early-return is a config syncer: two workers take
// namespaces from a queue and fetch each one's config parts concurrently
// with golang.org/x/sync/errgroup, the members sending the parts on an
// unbuffered channel. The bug: fetchAll returns on the first invalid
// part while the other members are still sending, and never waits for
// the group, so every namespace with a bad config leaks the members
// blocked on the send and the goroutine that waits for the group to
// close the channel.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/leakscope/leakscope/samples/internal/service"
)

// partsPerNamespace is how many parts fetchAll fetches at once.
const partsPerNamespace = 4

func main() {
	opts := service.Flags(10, "namespace syncs per second (one in four has a bad config)")
	flag.Parse()
	ctx, stop := service.Context(opts.Duration)
	defer stop()
	srv, err := service.Listen(opts.Addr)
	if err != nil {
		log.Fatal(err)
	}
	s := &syncer{}
	queue := make(chan int, 64)
	for range 2 {
		go s.worker(ctx, queue)
	}
	http.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%d namespaces synced, %d failed\n", s.synced.Load(), s.failed.Load())
	})
	srv.Start()
	service.Pace(ctx, opts.Rate, func(ctx context.Context, n int) {
		select {
		case queue <- n:
		default:
		}
	})
	if err := srv.Shutdown(); err != nil {
		log.Fatal(err)
	}
}

// syncer applies namespaces' configs.
type syncer struct {
	synced, failed atomic.Int64
}

// part is one fetched piece of a namespace's config.
type part struct {
	ns    int
	index int
	data  []byte
}

var errInvalid = errors.New("invalid config part")

func (p part) validate() error {
	if p.ns%4 == 3 {
		return fmt.Errorf("namespace ns-%d part %d: %w", p.ns, p.index, errInvalid)
	}
	return nil
}

// worker syncs each namespace it takes from the queue.
func (s *syncer) worker(ctx context.Context, queue <-chan int) {
	for {
		select {
		case <-ctx.Done():
			return
		case ns := <-queue:
			if _, err := s.fetchAll(ctx, ns); err != nil {
				s.failed.Add(1)
			} else {
				s.synced.Add(1)
			}
		}
	}
}

// fetchAll fetches a namespace's parts in parallel. The bug: it returns
// on the first invalid part, leaving the other members blocked on
// `out <- p` and the closer blocked in g.Wait.
func (s *syncer) fetchAll(ctx context.Context, ns int) ([]part, error) {
	g, ctx := errgroup.WithContext(ctx)
	out := make(chan part)
	for i := range partsPerNamespace {
		g.Go(func() error {
			p, err := fetchPart(ctx, ns, i)
			if err != nil {
				return err
			}
			out <- p
			return nil
		})
	}
	go func() {
		_ = g.Wait()
		close(out)
	}()
	var parts []part
	for p := range out {
		if err := p.validate(); err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return parts, g.Wait()
}

// fetchPart reads one part of a namespace's config from the store.
func fetchPart(ctx context.Context, ns, i int) (part, error) {
	select {
	case <-ctx.Done():
		return part{}, ctx.Err()
	case <-time.After(time.Millisecond):
	}
	return part{ns: ns, index: i, data: make([]byte, 512)}, nil
}
