// Command target is the version matrix's leaky service, small enough to
// build with every Go since 1.21. It serves net/http/pprof on a loopback
// port (first stdout line: "listening on http://HOST:PORT") and runs until
// SIGINT or SIGTERM, exiting 0, while:
//
//   - main.producer starts a main.worker every 20 ms and waits for its
//     answer, except for every fourth, which it abandons: that worker stays
//     blocked on its channel send forever (12.5 leaked goroutines a second,
//     each created by main.producer; the other three exit);
//   - main.idler waits on a channel held by a package variable: parked for
//     good but reachable, so not a leak (the runtime's goroutineleak
//     detector must not report it);
//   - main.churn allocates 64 KiB every 5 ms, keeping the last 16 live,
//     which makes several GC cycles and allocation samples a second.
package main

import (
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"syscall"
	"time"
)

var (
	wake = make(chan struct{}) // never closed or sent on
	keep [16][]byte
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "target:", err)
		os.Exit(1)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	go idler()
	go churn()
	go producer()
	go http.Serve(ln, nil)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
}

func producer() {
	for i := 0; ; i++ {
		ch := make(chan int)
		go worker(i, ch)
		if i%4 != 0 {
			<-ch
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func worker(i int, ch chan<- int) {
	ch <- i * i
}

func idler() {
	<-wake
}

func churn() {
	for i := 0; ; i++ {
		b := make([]byte, 64<<10)
		b[i%len(b)] = byte(i)
		keep[i%len(keep)] = b
		time.Sleep(5 * time.Millisecond)
	}
}
