// Command flightsvc serves net/http/pprof and the leakscope flight
// recorder (LEAKSCOPE_FLIGHT=off turns it off) and leaks a goroutine
// blocked on a send nobody receives for every request to /leak, which it
// sends itself -rate times a second (0: never). /work digests 4 KiB
// through a pool of 500 workers, as the stable-pool sample's does, for the
// overhead benchmark. It prints "listening on URL".
package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"time"

	_ "github.com/leakscope/leakscope/flight"
)

// leak answers a request, leaving its worker blocked.
func leak(w http.ResponseWriter, _ *http.Request) {
	ch := make(chan int)
	go worker(ch)
	fmt.Fprintln(w, "ok")
}

// worker sends its result on ch, which nobody reads.
func worker(ch chan<- int) { ch <- 42 }

// job is one digest for the pool.
type job struct {
	data  []byte
	reply chan [32]byte
}

// pool starts n workers digesting jobs.
func pool(n int) chan<- job {
	jobs := make(chan job)
	for range n {
		go func() {
			for j := range jobs {
				j.reply <- sha256.Sum256(j.data)
			}
		}()
	}
	return jobs
}

// work digests 4 KiB through the pool and answers the digest's start.
func work(jobs chan<- job) http.HandlerFunc {
	data := make([]byte, 4<<10)
	return func(w http.ResponseWriter, _ *http.Request) {
		reply := make(chan [32]byte, 1)
		jobs <- job{data: data, reply: reply}
		sum := <-reply
		fmt.Fprintf(w, "%x\n", sum[:8])
	}
}

func main() {
	rate := flag.Int("rate", 20, "requests per second")
	flag.Parse()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	http.HandleFunc("/leak", leak)
	http.HandleFunc("/work", work(pool(500)))
	go http.Serve(ln, nil)
	base := "http://" + ln.Addr().String()
	fmt.Printf("listening on %s\n", base)
	if *rate <= 0 {
		select {}
	}
	for range time.Tick(time.Second / time.Duration(*rate)) {
		if resp, err := http.Get(base + "/leak"); err == nil {
			resp.Body.Close()
		}
	}
}
