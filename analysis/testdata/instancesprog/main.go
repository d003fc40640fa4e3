// Command instancesprog plants stuck instances of code beside healthy
// instances of the same code (analysis TestInstancesApart,
// TestMixedSiteParts): workers left blocked by earlier calls of a
// handler whose goroutine now waits in a later call for its own worker;
// a Cond waiter started through a helper whose instance has no
// signaller, beside a signaller started the same way that signals a
// Cond of its own; a timer callback waiting on a lock left locked,
// beside a goroutine that holds another box's lock and will release it;
// and Cond waiters of one line and creator function, half of them with
// a signaller that sleeps before it signals, half with none. Every
// creator has returned, so a dump's lineage alone places no instance.
// It serves
// net/http/pprof on a loopback port, prints "ADDR host:port" and then
// "READY" to stderr once every goroutine is in place, and runs until
// SIGTERM. Unlike stuckprog it has no build constraint, so leakscope reads
// it as Go.
package main

import (
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"
)

// notifier is a Cond over its own lock, one per instance.
type notifier struct {
	mu   sync.Mutex
	cond *sync.Cond
}

// newNotifier makes one instance's notifier.
func newNotifier() *notifier {
	n := &notifier{}
	n.cond = sync.NewCond(&n.mu)
	return n
}

// after runs f on a goroutine of its own and closes the channel it
// returns once f returns (the shape of Kubernetes' wait.After).
func after(f func()) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		f()
	}()
	return ch
}

// lostSignal waits, through after, on a Cond of its own that nothing
// signals.
func lostSignal() {
	n := newNotifier()
	after(func() {
		n.mu.Lock()
		n.cond.Wait()
		n.mu.Unlock()
	})
}

// signaller signals a Cond of its own now and then, through after.
func signaller() {
	n := newNotifier()
	after(func() {
		for {
			n.mu.Lock()
			n.cond.Signal()
			n.mu.Unlock()
			time.Sleep(time.Second)
		}
	})
}

// pair waits, through after, on a Cond of its own; with signal, a
// goroutine started the same way signals it in an hour. Pairs with and
// without a signaller park at one line with one creator function: one
// group, partly stuck.
func pair(signal bool) {
	n := newNotifier()
	after(func() {
		n.mu.Lock()
		n.cond.Wait()
		n.mu.Unlock()
	})
	if signal {
		after(func() {
			time.Sleep(time.Hour)
			n.mu.Lock()
			n.cond.Signal()
			n.mu.Unlock()
		})
	}
}

// box holds a lock by value.
type box struct {
	id int64
	mu sync.Mutex
}

// keep holds its box's lock across a long sleep, then counts and
// releases it (b is used after the sleep: the traceback prints it).
func (b *box) keep() {
	b.mu.Lock()
	defer b.mu.Unlock()
	time.Sleep(time.Hour)
	b.id++
}

// handle gives its worker wait, then gives up: a worker that answers
// later blocks on its send forever (its result channel is the call's).
func handle(d, wait time.Duration) {
	ch := make(chan int)
	go work(ch, d)
	select {
	case <-ch:
	case <-time.After(wait):
	}
}

// work answers after d.
func work(ch chan<- int, d time.Duration) {
	time.Sleep(d)
	ch <- 1
}

// serve handles requests one after another on one goroutine, as a
// server's connection does: the first ten give up on their workers,
// which stay blocked; the last waits for its own, which answers in an
// hour.
func serve() {
	for range 10 {
		handle(20*time.Millisecond, time.Millisecond)
	}
	handle(time.Hour, 2*time.Hour)
}

// pairs is how many pairs plant starts with a signaller, and how many
// without.
const pairs = 3

// plant starts both pairs and the server, and returns.
func plant() {
	go lostSignal()
	go signaller()
	for i := range 2 * pairs {
		go pair(i%2 == 0)
	}
	lost := &box{}
	lost.mu.Lock()
	time.AfterFunc(time.Millisecond, func() { lost.mu.Lock() })
	held := &box{id: 1}
	go held.keep()
	go serve()
}

// settle waits until the planted goroutines are parked where they stay
// (a loaded machine may take a while to run them there), a minute at
// most.
func settle() {
	want := []string{"[sync.Cond.Wait]:\nsync.runtime_notifyListWait", "[sync.Mutex.Lock]:\n", "main.(*box).keep("}
	for start := time.Now(); time.Since(start) < time.Minute; time.Sleep(10 * time.Millisecond) {
		var b strings.Builder
		pprof.Lookup("goroutine").WriteTo(&b, 2)
		all := strings.Count(b.String(), "[chan send]:\nmain.work(") == 10 && strings.Contains(b.String(), "[select]:\nmain.handle(") &&
			strings.Count(b.String(), "main.pair.func1(") == 2*pairs && strings.Count(b.String(), "main.pair.func2(") == pairs
		for _, w := range want {
			all = all && strings.Contains(b.String(), w)
		}
		if all {
			return
		}
	}
}

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go http.Serve(ln, nil)
	plant()
	settle()
	fmt.Fprintf(os.Stderr, "ADDR %s\nREADY\n", ln.Addr())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
