// Command groupprog leaks the goroutines of a fan-out group that
// returns on its first result (analysis TestGroupWaitersBounded): each
// call of first leaves its other members blocked sending and the closer
// waiting in the group's Wait. The syncer that calls first makes five
// such calls, then one whose only member is still fetching (asleep):
// that member can still end its own group's Wait, and no other, since
// its closure holds that one group. syncerWG does the same with a
// sync.WaitGroup's Go, whose goroutine calls Done on its own WaitGroup. It serves net/http/pprof on a
// loopback port, prints "ADDR host:port" and then "READY" to stderr once
// every goroutine is in place, and runs until SIGTERM.
package main

import (
	"bytes"
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

// group runs functions and waits for them, as errgroup.Group does.
type group struct{ wg sync.WaitGroup }

func (g *group) Go(f func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
}

func (g *group) Wait() { g.wg.Wait() }

// first fetches parts at once and returns the first: the bug.
func first(parts int, fetch func(int) int) int {
	g := &group{}
	out := make(chan int)
	for i := range parts {
		g.Go(func() { out <- fetch(i) })
	}
	go func() {
		g.Wait()
		close(out)
	}()
	return <-out
}

// firstWG is first with a sync.WaitGroup's Go: the same bug.
func firstWG(parts int, fetch func(int) int) int {
	var wg sync.WaitGroup
	out := make(chan int)
	for i := range parts {
		wg.Go(func() { out <- fetch(i) })
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	return <-out
}

func syncer() {
	for range 5 {
		first(3, func(i int) int { return i })
	}
	first(1, func(int) int {
		time.Sleep(time.Hour)
		return 0
	})
}

func syncerWG() {
	for range 5 {
		firstWG(3, func(i int) int { return i })
	}
	firstWG(1, func(int) int {
		time.Sleep(time.Hour)
		return 0
	})
}

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go http.Serve(ln, nil)
	base := runtime.NumGoroutine()
	go syncer()
	go syncerWG()
	for runtime.NumGoroutine() < base+36 || parked("chan send") < 20 || parked("sync.WaitGroup.Wait") < 12 { // per syncer: itself, 10 senders, 5 closers, the fetch and its closer
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	fmt.Fprintf(os.Stderr, "ADDR %s\nREADY\n", ln.Addr())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}

// parked counts the goroutines whose state in a dump of all of them is
// state (waits in progress, not just goroutines started).
func parked(state string) int {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	return bytes.Count(buf[:n], []byte("["+state+"]"))
}
