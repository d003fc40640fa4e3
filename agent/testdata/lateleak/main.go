// Command lateleak serves net/http/pprof and runs healthy until it gets
// SIGUSR1; from then on every request it serves leaves a worker blocked
// forever on a send nobody receives. With -twin a second handler leaks
// workers of the same stack from another creator. It prints "listening on URL" at the
// start and "leaking from TIME" (RFC 3339, nanoseconds) when the leak
// begins, just before the first leaking worker starts.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

var leaking atomic.Bool

// lookup answers a request; once leaking, its worker's result is never
// read.
func lookup(w http.ResponseWriter, _ *http.Request) {
	leak := leaking.Load()
	ch := make(chan int)
	go worker(ch)
	if !leak {
		<-ch
	}
	fmt.Fprintln(w, "ok")
}

// lookupTwin is lookup from another place: its workers have the same
// stack and another creator.
func lookupTwin(w http.ResponseWriter, _ *http.Request) {
	leak := leaking.Load()
	ch := make(chan int)
	go worker(ch)
	if !leak {
		<-ch
	}
	fmt.Fprintln(w, "ok")
}

// worker computes and sends its result on ch.
func worker(ch chan<- int) {
	ch <- 42
}

func main() {
	rate := flag.Int("rate", 20, "requests per second")
	twin := flag.Bool("twin", false, "call /lookup2 too, whose workers leak from another creator")
	flag.Parse()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	http.HandleFunc("/lookup", lookup)
	http.HandleFunc("/lookup2", lookupTwin)
	go http.Serve(ln, nil)
	base := "http://" + ln.Addr().String()
	fmt.Printf("listening on %s\n", base)
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		<-usr1
		fmt.Printf("leaking from %s\n", time.Now().UTC().Format(time.RFC3339Nano))
		leaking.Store(true)
	}()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for range time.Tick(time.Second / time.Duration(*rate)) {
		if resp, err := client.Get(base + "/lookup"); err == nil {
			resp.Body.Close()
		}
		if !*twin {
			continue
		}
		if resp, err := client.Get(base + "/lookup2"); err == nil {
			resp.Body.Close()
		}
	}
}
