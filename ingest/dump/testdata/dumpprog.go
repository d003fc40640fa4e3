//go:build ignore

// dumpprog parks goroutines in known states and then either prints its
// debug=2 goroutine dump (mode "dump"), waits to be killed with SIGQUIT
// (mode "wait"), or writes about 100 KiB of application log to stderr
// and panics, as a service's log ends in a crash (mode "logpanic"). The
// dump parser's tests build and run it.
//
// Before the dump it prints to stderr, one per line:
//
//	EXITED <goid>        a goroutine that created others and then exited
//	ROLE <name> <goid>   the goroutine playing a role
//	ADDR <var> <addr>    the address of a variable the roles block on
//	NUMGOROUTINE <n>     runtime.NumGoroutine() once every role is parked
//	READY                (mode "wait" only) send SIGQUIT now
package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"
)

// roles maps a role's function (as it appears in a stack) to the state
// its goroutine must show once parked.
var roles = map[string]string{
	"main.chanSend(":    "[chan send",
	"main.chanRecv(":    "[chan receive",
	"main.selectWait(":  "[select",
	"main.selectNone(":  "[select (no cases)",
	"main.mutexWait(":   "[sync.Mutex.Lock",
	"main.wgWait(":      "[sync.WaitGroup.Wait",
	"main.condWait(":    "[sync.Cond.Wait",
	"main.sleeper(":     "[sleep",
	"main.ioWait(":      "[IO wait",
	"main.locked(":      "[chan receive",
	"main.labeled(":     "[chan receive",
	"main.deep(":        "[chan receive",
	"main.orphan(":      "[chan receive",
	"main.fromWorker(":  "[chan receive",
	"main.chanRecvNil(": "[chan receive (nil chan)",
}

var (
	block  = make(chan int) // only ever received from
	sendc  = make(chan int) // only ever sent to
	mu     sync.Mutex
	wg     sync.WaitGroup
	cond   = sync.NewCond(&sync.Mutex{})
	ln     net.Listener
	nilc   chan int
	report = make(chan string, 100)
)

func goid() int64 {
	var buf [64]byte
	s := string(buf[:runtime.Stack(buf[:], false)])
	s = strings.TrimPrefix(s, "goroutine ")
	id, _ := strconv.ParseInt(s[:strings.IndexByte(s, ' ')], 10, 64)
	return id
}

func role(name string) { report <- fmt.Sprintf("ROLE %s %d", name, goid()) }

func chanSend()    { role("chanSend"); sendc <- 1 }
func chanRecv()    { role("chanRecv"); <-block }
func chanRecvNil() { role("chanRecvNil"); <-nilc }
func selectWait() {
	role("selectWait")
	c := make(chan int)
	select {
	case <-block:
	case c <- 1:
	}
}
func selectNone() { role("selectNone"); select {} }
func mutexWait()  { role("mutexWait"); mu.Lock() }
func wgWait()     { role("wgWait"); wg.Wait() }
func condWait() {
	role("condWait")
	cond.L.Lock()
	for {
		cond.Wait()
	}
}
func sleeper() { role("sleeper"); time.Sleep(24 * time.Hour) }
func ioWait()  { role("ioWait"); ln.Accept() }
func locked() {
	runtime.LockOSThread()
	role("locked")
	<-block
}
func labeled() {
	pprof.Do(context.Background(), pprof.Labels("team", "leaks", "app", "dumpprog"), func(context.Context) {
		role("labeled")
		<-block
	})
}

//go:noinline
func deep(n int) int {
	if n == 0 {
		role("deep")
		return <-block
	}
	return deep(n-1) + 1
}

func orphan()     { role("orphan"); <-block }
func fromWorker() { role("fromWorker"); <-block }

// spawner creates two goroutines and exits, so their creator is gone.
func spawner(done chan<- int64) {
	go orphan()
	go orphan()
	done <- goid()
}

// worker creates a goroutine and stays parked.
func worker() {
	go fromWorker()
	role("worker")
	<-block
}

func main() {
	mode := "dump"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	var err error
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mu.Lock()
	wg.Add(1)
	for _, f := range []func(){chanSend, chanRecv, chanRecvNil, selectWait, selectNone, mutexWait, wgWait, condWait, sleeper, ioWait, locked, labeled, worker} {
		go f()
	}
	go deep(300)
	done := make(chan int64)
	go spawner(done)
	fmt.Fprintf(os.Stderr, "EXITED %d\n", <-done)
	roles["main.worker("] = "[chan receive"
	for i := 0; i < len(roles)+1; i++ { // orphan reports twice
		fmt.Fprintln(os.Stderr, <-report)
	}
	waitParked()
	fmt.Fprintf(os.Stderr, "ADDR mu %p\nADDR wg %p\n", &mu, &wg)
	fmt.Fprintf(os.Stderr, "NUMGOROUTINE %d\n", runtime.NumGoroutine())
	switch mode {
	case "dump":
		pprof.Lookup("goroutine").WriteTo(os.Stdout, 2)
	case "wait":
		fmt.Fprintln(os.Stderr, "READY")
		select {}
	case "logpanic":
		for i := 0; i < 1500; i++ {
			fmt.Fprintf(os.Stderr, "I1201 08:00:%02d.%06d       1 reconciler.go:%d] reconciled object default/item-%d in %dms\n", i%60, i, 40+i%7, i, i%13)
		}
		var m map[string]int
		m["boom"]++ // panics: assignment to entry in nil map
	}
}

// waitParked polls the goroutine dump until every role goroutine shows its
// expected state and the spawner is gone.
func waitParked() {
	buf := make([]byte, 1<<20)
	for tries := 0; ; tries++ {
		dump := buf[:runtime.Stack(buf, true)]
		ok := !bytes.Contains(dump, []byte("main.spawner("))
		n := 0
		for _, block := range bytes.Split(dump, []byte("\n\n")) {
			for fn, state := range roles {
				if bytes.Contains(block, []byte("\n"+fn)) {
					n++
					if !bytes.Contains(block, []byte(state+"]")) && !bytes.Contains(block, []byte(state+",")) && !bytes.Contains(block, []byte(state+" labels")) {
						ok = false
					}
				}
			}
		}
		// orphan runs twice.
		if ok && n == len(roles)+1 {
			return
		}
		if tries > 1000 {
			fmt.Fprintf(os.Stderr, "goroutines never parked (%d roles seen):\n%s", n, dump)
			os.Exit(1)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
