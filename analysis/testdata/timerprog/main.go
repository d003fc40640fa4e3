//go:build ignore

// timerprog parks goroutines in selects and receives whose way out only
// the statement itself shows: in mode "live" a retry loop on time.After,
// a signal wait outside main and a ticker loop with a context; in mode
// "stuck" a select with no timer case in a function that uses
// time.After elsewhere and a receive from a stopped timer's channel. It
// serves net/http/pprof on a loopback
// port, prints "ADDR host:port" and then "READY" to stderr once every
// goroutine is in place, and runs until SIGQUIT or SIGTERM. The source
// tests build and run it.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

// retry polls for work forever, waking every few microseconds: live.
func retry(work chan int) {
	for {
		select {
		case <-work:
		case <-time.After(5 * time.Microsecond):
		}
	}
}

// waitBoth waits for two replies nobody sends; it uses time.After only
// after the select, which no timer ends: stuck.
func waitBoth(a, b chan int) {
	select {
	case <-a:
	case <-b:
	}
	<-time.After(time.Millisecond)
}

func worker() { waitBoth(make(chan int), make(chan int)) }

type retrier struct {
	timer   *time.Timer
	backoff time.Duration
}

// reset drains a stopped timer's channel, which delivers nothing: stuck.
func (r *retrier) reset() {
	if !r.timer.Stop() {
		<-r.timer.C
	}
	r.timer.Reset(r.backoff)
}

func backoff() {
	r := &retrier{timer: time.NewTimer(time.Hour), backoff: time.Millisecond}
	r.timer.Stop()
	r.reset()
}

// waitSignal waits for SIGUSR1: idle until signalled.
func waitSignal() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1)
	<-c
}

// every ticks until ctx ends: live.
func every(ctx context.Context, d time.Duration) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// start starts the goroutines of a mode and returns, so that no creator
// of theirs can feed them.
func start(ctx context.Context, mode string, started chan<- bool) {
	switch mode {
	case "live":
		go retry(make(chan int))
		go waitSignal()
		go every(ctx, time.Hour)
	case "stuck":
		go worker()
		go backoff()
	}
	started <- true
}

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go http.Serve(ln, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan bool)
	go start(ctx, os.Args[1], started)
	<-started
	for range 100 {
		runtime.Gosched()
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "ADDR %s\nREADY\n", ln.Addr())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
