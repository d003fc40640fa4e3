// Command wakeprog parks goroutines whose waker only the program read as
// Go shows (analysis TestWakersReadAsGo): a consumer sleeping in the
// body of its range over results (the workers sending to it and the
// producer feeding them can all be woken), lease holders waiting on the
// Done channel of a context with a deadline, a reaper ranging over a
// channel only time.AfterFunc callbacks send on, a drain ranging over one
// only a context.AfterFunc callback sends on (its context is cancelled
// on SIGTERM), and one bug: a lazy
// dial run by sync.Once that waits for a ready channel nobody closes,
// with the later callers queued on the Once's own mutex. It serves
// net/http/pprof on a loopback port, prints "ADDR host:port" and then
// "READY" to stderr once every goroutine is in place, and runs until
// SIGTERM.
package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"
)

func produce(jobs chan<- int) {
	for i := 0; ; i++ {
		jobs <- i
	}
}

func work(jobs <-chan int, results chan<- int) {
	for j := range jobs {
		results <- j * j
	}
}

// consume sleeps between reads: a rate-limited writer.
func consume(results <-chan int) {
	for range results {
		time.Sleep(time.Hour)
	}
}

// hold waits for its lease's deadline.
func hold(ttl time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), ttl)
	defer cancel()
	<-ctx.Done()
}

// reap takes the ids expiry callbacks send.
func reap(expired <-chan string) {
	for id := range expired {
		_ = id
	}
}

// drain takes what the program hands over once it is told to stop.
func drain(handed <-chan string) {
	for h := range handed {
		_ = h
	}
}

type client struct {
	once  sync.Once
	ready chan struct{}
	addr  string
}

// dial waits for a ready channel nobody closes: the bug.
func (c *client) dial() {
	<-c.ready
	c.addr = "10.0.0.1:443"
}

func (c *client) call() string {
	c.once.Do(c.dial)
	return c.addr
}

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go http.Serve(ln, nil)
	jobs, results := make(chan int), make(chan int)
	for range 3 {
		go work(jobs, results)
	}
	go produce(jobs)
	go consume(results)
	for range 2 {
		go hold(time.Hour)
	}
	expired := make(chan string)
	for i := range 2 {
		time.AfterFunc(time.Hour, func() { expired <- fmt.Sprint("session-", i) })
	}
	go reap(expired)
	stopping, stop := context.WithCancel(context.Background())
	handed := make(chan string)
	context.AfterFunc(stopping, func() { handed <- "state"; close(handed) })
	go drain(handed)
	c := &client{ready: make(chan struct{})}
	for range 3 {
		go c.call()
	}
	for runtime.NumGoroutine() < 14 || parked("sync.Mutex.Lock") < 2 { // the two callers queued on the Once
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	fmt.Fprintf(os.Stderr, "ADDR %s\nREADY\n", ln.Addr())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
	stop()
}

// parked counts the goroutines whose state in a dump of all of them is
// state (waits in progress, not just goroutines started).
func parked(state string) int {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	return bytes.Count(buf[:n], []byte("["+state+"]"))
}
