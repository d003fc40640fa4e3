// Command handlerheap serves a handler with two bugs in one function
// (analysis/handlerheap_test.go): every request appends a 4 KiB buffer
// to a package-level slice that is never trimmed, and starts a goroutine
// that sends its result on a channel nobody receives from. The goroutine
// holds its channel; the slice is the handler's own. The program calls
// its own handler 50 times a second, with the heap sampled at
// MemProfileRate=4096. It serves net/http/pprof, prints "listening on
// http://HOST:PORT" and runs until SIGINT or SIGTERM.
package main

import (
	"fmt"
	"io"
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

var (
	mu      sync.Mutex
	history [][]byte // every request's buffer, never trimmed
)

// init samples the heap at one allocation per 4 KiB before main
// allocates anything of its own.
func init() { runtime.MemProfileRate = 4096 }

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	http.HandleFunc("/work", handle)
	srv := &http.Server{}
	go srv.Serve(ln)
	fmt.Printf("listening on http://%s\n", ln.Addr())
	go drive("http://" + ln.Addr().String() + "/work")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	srv.Close()
}

// drive requests url 50 times a second.
func drive(url string) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for range t.C {
		resp, err := http.Get(url)
		if err != nil {
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// handle keeps a copy of the request's buffer and starts a computation
// whose result it never waits for.
func handle(w http.ResponseWriter, r *http.Request) {
	mu.Lock()
	history = append(history, make([]byte, 4096)) // grows on its own
	mu.Unlock()
	result := make(chan int)
	go func() {
		result <- len(r.URL.Path) // nobody receives: leaks
	}()
	fmt.Fprintln(w, "ok")
}
