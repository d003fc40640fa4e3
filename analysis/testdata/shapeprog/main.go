// Command shapeprog parks N goroutines in one of the wait shapes whose
// analysis cost the benchmarks measure, writes a debug=2 goroutine dump
// of itself to stdout and exits:
//
//	shapeprog pool N    N workers on one jobs channel, half in a plain
//	                    receive, half in a select beside a quit channel
//	shapeprog shared N  N goroutines holding one struct, parked on it in
//	                    eight ways: receive, send, select, Lock, RLock,
//	                    RWMutex.Lock, Cond.Wait, WaitGroup.Wait
//	shapeprog mixed N   N Cond waiters of one line and creator function,
//	                    each on a Cond of its own, half of them with a
//	                    signaller that sleeps before it signals
//	shapeprog bounded N N Cond waiters, each on the Cond of a queue its
//	                    controller holds behind an interface (set by the
//	                    controller's composite literal alone), one in a
//	                    hundred with a signaller that sleeps, then
//	                    signals its own controller's queue
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"
)

// shared is the one object every goroutine of the shared shape holds.
type shared struct {
	recv, send, sel chan int
	mu              sync.Mutex
	rw, w           sync.RWMutex
	cond            *sync.Cond
	wg              sync.WaitGroup
	woken           [8]int
}

func worker(jobs <-chan int) {
	for range jobs {
	}
}

func selector(jobs <-chan int, quit <-chan struct{}) {
	for {
		select {
		case <-jobs:
		case <-quit:
			return
		}
	}
}

func park(s *shared, kind int) {
	switch kind {
	case 0:
		<-s.recv
	case 1:
		s.send <- 1
	case 2:
		select {
		case <-s.sel:
		case <-s.recv:
		}
	case 3:
		s.mu.Lock()
	case 4:
		s.rw.RLock()
	case 5:
		s.w.Lock()
	case 6:
		s.cond.L.Lock()
		s.cond.Wait()
	case 7:
		s.wg.Wait()
	}
	s.woken[kind]++ // keeps s live across the wait, so frames print it
}

// notifier is one mixed-shape instance's Cond.
type notifier struct {
	mu   sync.Mutex
	cond *sync.Cond
}

// pair starts one Cond waiter and, with signal, a goroutine that signals
// its Cond in an hour; it returns, so the waiter's creator is gone.
func pair(signal bool) {
	n := &notifier{}
	n.cond = sync.NewCond(&n.mu)
	go func() {
		n.mu.Lock()
		n.cond.Wait()
		n.mu.Unlock()
	}()
	if signal {
		go func() {
			time.Sleep(time.Hour)
			n.mu.Lock()
			n.cond.Signal()
			n.mu.Unlock()
		}()
	}
}

// getter is a bounded-shape queue as its controller holds it.
type getter interface {
	get()
	put()
}

// queue is a Cond over its own lock.
type queue struct{ cond *sync.Cond }

func (q *queue) get() {
	q.cond.L.Lock()
	q.cond.Wait()
	q.cond.L.Unlock()
}

func (q *queue) put() { q.cond.Signal() }

// controller holds one queue.
type controller struct{ q getter }

// run starts the queue's worker and returns, so its creator is gone.
func (c *controller) run() { go c.q.get() }

// signals signals the queue hourly.
func (c *controller) signals() {
	for {
		time.Sleep(time.Hour)
		c.q.put()
	}
}

// control makes a controller and starts its worker, then, with signal,
// signals its queue.
func control(signal bool) {
	c := &controller{q: &queue{cond: sync.NewCond(&sync.Mutex{})}}
	go c.run()
	if signal {
		c.signals()
	}
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: shapeprog pool|shared|mixed|bounded N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "pool":
		jobs, quit := make(chan int), make(chan struct{})
		for i := range n {
			if i%2 == 0 {
				go worker(jobs)
			} else {
				go selector(jobs, quit)
			}
		}
		settleAndDump(n)
	case "shared":
		s := &shared{recv: make(chan int), send: make(chan int), sel: make(chan int), cond: sync.NewCond(&sync.Mutex{})}
		s.mu.Lock()
		s.rw.Lock()
		s.w.RLock()
		s.wg.Add(1)
		for i := range n {
			go park(s, i%8)
		}
		settleAndDump(n)
	case "mixed":
		for i := range n {
			go pair(i%2 == 0)
		}
		settleAndDump(n + n/2)
	case "bounded":
		for i := range n {
			go control(i%100 == 0)
		}
		settleAndDump(n + (n+99)/100)
	}
}

// settleAndDump waits until the n goroutines have started and had time
// to park, then writes the dump.
func settleAndDump(n int) {
	for runtime.NumGoroutine() < n+1 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	pprof.Lookup("goroutine").WriteTo(os.Stdout, 2)
}
