// Command boundprog plants Cond waiters of many controllers beside a few
// signallers that still run (analysis TestBoundedWakers): each
// controller holds two queues behind an interface, set by its composite
// literal alone; its workers wait on the queues' Conds, started by a
// goroutine that has returned; its signaller signals its own two queues
// forever, or returns at once. The first argument is how many
// signallers run (default 3 of 40). It serves net/http/pprof on a
// loopback port, prints "ADDR host:port" and then "READY" to stderr once
// every goroutine is in place, and runs until SIGTERM.
package main

import (
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

const controllers = 40

// getter is a queue's interface, as a controller holds it.
type getter interface {
	get()
	put()
}

// queue is a Cond over its own lock.
type queue struct{ cond *sync.Cond }

func (q *queue) get() {
	q.cond.L.Lock()
	defer q.cond.L.Unlock()
	q.cond.Wait()
}

func (q *queue) put() { q.cond.Signal() }

// controller holds two queues, each worked by one goroutine.
type controller struct {
	main, retry getter
}

func (c *controller) worker(q getter) {
	for {
		q.get()
	}
}

func (c *controller) run() {
	go c.worker(c.main)
	go c.worker(c.retry)
}

// signals signals both queues now and then, forever.
func (c *controller) signals() {
	for {
		c.main.put()
		c.retry.put()
		time.Sleep(5 * time.Millisecond)
	}
}

// start makes a controller and starts its workers; live says whether it
// then signals its queues.
func start(live bool, started *sync.WaitGroup) {
	c := &controller{
		main:  &queue{cond: sync.NewCond(&sync.Mutex{})},
		retry: &queue{cond: sync.NewCond(&sync.Mutex{})},
	}
	go c.run()
	started.Done()
	if live {
		c.signals()
	}
}

func main() {
	live := 3
	if len(os.Args) > 1 {
		live, _ = strconv.Atoi(os.Args[1])
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go http.Serve(ln, nil)
	var started sync.WaitGroup
	started.Add(controllers)
	for i := range controllers {
		go start(i < live, &started)
	}
	started.Wait()
	for runtime.NumGoroutine() < 2*controllers+live+2 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	fmt.Fprintf(os.Stderr, "ADDR %s\nREADY\n", ln.Addr())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
