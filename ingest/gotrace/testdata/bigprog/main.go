// Command bigprog records a large Go execution trace for the gotrace
// benchmarks: a server-like loop that spawns many short-lived goroutines
// (channel ping-pong, mutexes, sleeps, allocation, GC) and leaks a few,
// until the trace reaches -size bytes.
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
	flag.Parse()
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
	var mu sync.Mutex
	shared := 0
	leaks := 0
	for round := 0; cw.n.Load() < *size; round++ {
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
	trace.Stop()
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(cw.n.Load(), shared)
}
