// Command idlepool is healthy: sixteen workers started once wait on a jobs
// channel that main still owns and will feed when work arrives.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

type job struct{ id int }

func worker(jobs <-chan job, results chan<- int) {
	for j := range jobs {
		results <- j.id * 2
	}
}

func main() {
	jobs, results := make(chan job), make(chan int, 16)
	for i := 0; i < 16; i++ {
		go worker(jobs, results)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
	close(jobs)
}
