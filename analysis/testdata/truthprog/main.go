// Command truthprog is the program the analysis's figures are checked
// against (analysis/truthprog_test.go). It serves net/http/pprof, prints
// "listening on http://HOST:PORT", waits -delay, then
//
//   - leaks exactly -rate goroutines a second through
//     main → go ticker() → dispatch → go fetchQuote (parked forever on a
//     channel receive), paced by elapsed time so a loaded machine delays
//     them but does not lose any;
//   - grows a cache map by one 4 KiB buffer every 50 ms, with the heap
//     sampled at MemProfileRate=4096.
//
// GET /lag answers the largest delay, in milliseconds, by which the
// pacing ran behind the clock; the test bounds its rates by it. GET
// /first answers when the first goroutine leaked (Unix nanoseconds, 0
// before): a loaded machine may start the pacing late.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

var (
	never   = make(chan struct{})
	cacheMu sync.Mutex
	cache   = map[int][]byte{}
	lagMax  atomic.Int64 // nanoseconds
	firstAt atomic.Int64 // Unix nanoseconds of the first leak
)

// init samples the heap at one allocation per 4 KiB before main allocates
// anything of its own.
func init() { runtime.MemProfileRate = 4096 }

func main() {
	rate := flag.Float64("rate", 10, "goroutines leaked per second")
	delay := flag.Duration("delay", time.Second, "wait before leaking")
	flag.Parse()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	http.HandleFunc("/lag", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%.3f\n", float64(lagMax.Load())/1e6)
	})
	http.HandleFunc("/first", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%d\n", firstAt.Load())
	})
	srv := &http.Server{}
	go srv.Serve(ln)
	fmt.Printf("listening on http://%s\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case <-time.After(*delay):
	case <-ctx.Done():
		return
	}
	go ticker(*rate)
	go filler()
	<-ctx.Done()
	srv.Close()
}

// ticker dispatches rate quotes a second, as many as are due by the clock.
func ticker(rate float64) {
	start := time.Now()
	n := 0
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for range t.C {
		elapsed := time.Since(start)
		due := int(elapsed.Seconds() * rate)
		if due > n {
			// How late the oldest due quote is.
			late := elapsed - time.Duration(float64(n+1)/rate*float64(time.Second))
			if int64(late) > lagMax.Load() {
				lagMax.Store(int64(late))
			}
		}
		for ; n < due; n++ {
			if n == 0 {
				firstAt.Store(time.Now().UnixNano())
			}
			dispatch(n)
		}
	}
}

// dispatch starts one quote fetch and forgets it.
func dispatch(n int) {
	go fetchQuote(n)
}

// fetchQuote waits for an answer that never comes.
func fetchQuote(n int) {
	<-never
	_ = n
}

// filler puts one 4 KiB buffer in the cache every 50 ms and never evicts.
func filler() {
	start := time.Now()
	n := 0
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for range t.C {
		for due := int(time.Since(start) / (50 * time.Millisecond)); n < due; n++ {
			buf := make([]byte, 4096)
			cacheMu.Lock()
			cache[n] = buf
			cacheMu.Unlock()
		}
	}
}
