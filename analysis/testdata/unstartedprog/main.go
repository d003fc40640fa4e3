// Command unstartedprog writes a debug=2 goroutine dump of itself to
// standard output at an instant a goroutine has been started but has not
// run yet (analysis TestUnstartedGoroutineWakes): the dump shows it only
// in the wrapper the compiler made for its go statement
// ("main.watch.gowrap1"), while its creator waits on the channel it will
// send on. Beside it a twin is stuck for good: its sender waits on a
// gate nothing can open. It runs on one P, so that the order in which
// goroutines run is the scheduler's queue order.
package main

import (
	"bytes"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"
)

// watcher hands its creator one event once its gate opens.
type watcher struct {
	events chan int
	gate   chan struct{}
}

func (w *watcher) run() {
	<-w.gate
	w.events <- 1
}

// watch starts a watcher, then (when given) another goroutine, and waits
// for the watcher's event.
func watch(gate chan struct{}, then func()) int {
	w := &watcher{events: make(chan int), gate: gate}
	go w.run()
	if then != nil {
		go then() // takes the next turn: the watcher's goroutine waits behind it
	}
	return <-w.events
}

// dump writes every goroutine's stack to standard output and exits.
func dump() {
	var b bytes.Buffer
	pprof.Lookup("goroutine").WriteTo(&b, 2)
	os.Stdout.Write(b.Bytes())
	os.Exit(0)
}

// parked counts the goroutines whose dump header shows state.
func parked(state string) int {
	buf := make([]byte, 1<<20)
	return strings.Count(string(buf[:runtime.Stack(buf, true)]), "["+state+"]")
}

func main() {
	runtime.GOMAXPROCS(1)
	go watch(make(chan struct{}), nil) // stuck: no statement can open its gate
	for parked("chan receive") < 2 {
		time.Sleep(time.Millisecond)
	}
	open := make(chan struct{})
	close(open)
	go watch(open, dump)
	time.Sleep(time.Hour)
}
