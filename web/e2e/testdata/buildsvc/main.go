// Command buildsvc is the service TestFleetBuilds builds twice from a git
// repository of its own: the first commit as it is here (healthy), the
// second with leaky set to true, so that each poll leaves a goroutine
// blocked on a send nobody receives. It serves net/http/pprof on a
// loopback port and prints "listening http://ADDR".
package main

import (
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"time"
)

// leaky is what the test's second commit changes.
const leaky = false

// probe reports one result; with no buffer and no reader it blocks for
// ever.
func probe(results chan<- int) { results <- 1 }

// poll starts a probe and does not wait for its result.
func poll() {
	size := 1
	if leaky {
		size = 0
	}
	results := make(chan int, size)
	go probe(results)
}

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("listening http://%s\n", ln.Addr())
	go http.Serve(ln, nil)
	for range time.Tick(20 * time.Millisecond) {
		poll()
	}
}
