// Command bigprog records a large Go execution trace for the gotrace
// benchmarks until the trace reaches -size bytes, in one of three shapes
// (-shape):
//
//   - mixed: a server-like loop that spawns many short-lived goroutines
//     (channel ping-pong, mutexes, sleeps, allocation, GC) and leaks a few;
//   - spans: an instrumented service, 2,000 short goroutines per round,
//     each with a task of its own and a region in it;
//   - goroutines: 2,000 short goroutines per round that block once on a
//     channel and exit, with no tasks or regions.
//
// With -pace MBPS the rounds wait so that the trace grows by at most that
// many MB a second: the runtime starts a generation about every second,
// so the pace sets how much a generation holds (a busy service writes a
// few MB a second, where an unpaced loop writes tens).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"time"
)

type countingWriter struct {
	w io.Writer
	n atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

var sink atomic.Pointer[[]byte]

func main() {
	out := flag.String("out", "big.trace", "trace file")
	size := flag.Int64("size", 220<<20, "stop once the trace has this many bytes")
	shape := flag.String("shape", "mixed", "mixed, spans or goroutines")
	pace := flag.Float64("pace", 0, "at most this many MB of trace a second (0: as fast as it goes)")
	flag.Parse()
	rounds, ok := shapes[*shape]
	if !ok {
		fmt.Fprintf(os.Stderr, "bigprog: unknown -shape %q\n", *shape)
		os.Exit(2)
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cw := &countingWriter{w: f}
	if err := trace.Start(cw); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	start := time.Now()
	shared := rounds(func() bool {
		n := cw.n.Load()
		if *pace > 0 {
			time.Sleep(time.Until(start.Add(time.Duration(float64(n) / (*pace * (1 << 20)) * float64(time.Second)))))
		}
		return n < *size
	})
	trace.Stop()
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(cw.n.Load(), shared)
}

// shapes maps -shape to its loop, which runs rounds while more returns
// true and returns a sum that keeps the work from being optimised away.
var shapes = map[string]func(more func() bool) int{
	"mixed":      mixed,
	"spans":      spans,
	"goroutines": goroutines,
}

func mixed(more func() bool) int {
	var mu sync.Mutex
	shared := 0
	leaks := 0
	for round := 0; more(); round++ {
		ctx, task := trace.NewTask(context.Background(), "round")
		var wg sync.WaitGroup
		for i := 0; i < 200; i++ {
			wg.Add(1)
			ping, pong := make(chan int), make(chan int)
			go func() {
				defer wg.Done()
				trace.WithRegion(ctx, "handle", func() {
					for j := 0; j < 4; j++ {
						ping <- j
						<-pong
					}
				})
				close(ping)
				b := make([]byte, 512)
				sink.Store(&b)
			}()
			go func() {
				for v := range ping {
					mu.Lock()
					shared += v
					mu.Unlock()
					pong <- v
				}
			}()
		}
		if round%50 == 0 && leaks < 10000 {
			leaks++
			go func() { <-make(chan int) }()
			time.Sleep(10 * time.Microsecond)
		}
		wg.Wait()
		task.End()
	}
	return shared
}

// spans is the instrumented service: every goroutine opens a task and a
// region, does a little work and ends them.
func spans(more func() bool) int {
	var total atomic.Int64
	for more() {
		var wg sync.WaitGroup
		for i := 0; i < 2000; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, task := trace.NewTask(context.Background(), "request")
				trace.WithRegion(ctx, "handle", func() {
					b := make([]byte, 64+i%64)
					sink.Store(&b)
					total.Add(int64(len(b)))
				})
				task.End()
			}()
		}
		wg.Wait()
	}
	return int(total.Load())
}

// goroutines spawns short goroutines that each block once on a channel.
func goroutines(more func() bool) int {
	var total atomic.Int64
	for more() {
		var wg sync.WaitGroup
		for i := 0; i < 2000; i++ {
			wg.Add(1)
			c := make(chan int)
			go func() {
				defer wg.Done()
				total.Add(int64(<-c))
			}()
			go func() { c <- i }()
		}
		wg.Wait()
	}
	return int(total.Load())
}
