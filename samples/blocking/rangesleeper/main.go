// Command rangesleeper is healthy: a pipeline whose consumer sleeps in
// the body of its range over the results, as a rate-limited writer does.
// Between its reads the workers wait to send their results and the
// producer waits to hand out the next job; each read wakes one worker,
// which then takes the next job.
package main

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

func produce(jobs chan<- int) {
	for i := 0; ; i++ {
		jobs <- i
	}
}

func work(jobs <-chan int, results chan<- int) {
	for j := range jobs {
		results <- j * j
	}
}

func consume(results <-chan int) {
	for range results {
		time.Sleep(time.Second) // a rate-limited write
	}
}

func main() {
	jobs, results := make(chan int), make(chan int)
	for i := 0; i < 3; i++ {
		go work(jobs, results)
	}
	go produce(jobs)
	go consume(results)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
