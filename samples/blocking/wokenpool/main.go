// Command wokenpool is healthy: eight workers wait on a jobs channel, and
// a dispatcher started as a closure hands out a job every 250 ms, so
// between two dumps a second apart several workers have run and parked
// again at the same receive, with their wait times restarted.
package main

import (
	"crypto/sha256"
	"os"
	"os/signal"
	"syscall"
	"time"
)

type job struct {
	id      int
	payload []byte
}

func worker(jobs <-chan job, results chan<- [32]byte) {
	for j := range jobs {
		results <- sha256.Sum256(j.payload)
	}
}

func main() {
	jobs := make(chan job)
	results := make(chan [32]byte, 64)
	for i := 0; i < 8; i++ {
		go worker(jobs, results)
	}
	go func() {
		for id := 0; ; id++ {
			time.Sleep(250 * time.Millisecond)
			jobs <- job{id: id, payload: []byte{byte(id), byte(id >> 8)}}
		}
	}()
	go func() {
		for range results {
		}
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
	close(jobs)
}
