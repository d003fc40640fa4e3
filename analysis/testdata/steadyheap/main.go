// Command steadyheap holds a steady heap that a few heap profiles can
// mistake for growth (analysis/steadyheap_test.go): main.churn allocates
// 64 KiB every 5 ms and keeps only the last 16 (1 MiB live), with the
// runtime's default MemProfileRate, as the version matrix's target does.
// It serves net/http/pprof, prints "listening on http://HOST:PORT" and
// runs until SIGINT or SIGTERM.
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

var keep [16][]byte

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go http.Serve(ln, nil)
	fmt.Printf("listening on http://%s\n", ln.Addr())
	go churn()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
}

// churn replaces one of 16 live 64 KiB buffers every 5 ms.
func churn() {
	for i := 0; ; i++ {
		b := make([]byte, 64<<10)
		b[i%len(b)] = byte(i)
		keep[i%len(keep)] = b
		time.Sleep(5 * time.Millisecond)
	}
}
