// Command feederclosure has two bugs beside a healthy worker pool: a
// batch waits for its workers, one of which returns without Done, and a
// publisher sends on a package-level channel that no statement of the
// program receives from. A feeder closure, which captures only the jobs
// channel and its queue, keeps the pool busy: it can release neither.
package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

var events = make(chan string)

type batch struct{ wg sync.WaitGroup }

func (b *batch) run(items []string) {
	for _, it := range items {
		b.wg.Add(1)
		go func() {
			if it == "" {
				return // bug: no Done
			}
			b.wg.Done()
		}()
	}
	b.wg.Wait()
}

func publish(ev string) {
	events <- ev // bug: nothing receives from events
}

func main() {
	jobs := make(chan int)
	queue := []int{3, 1, 4, 1, 5}
	for i := 0; i < 4; i++ {
		go func() {
			for j := range jobs {
				_ = j * j
			}
		}()
	}
	go func() {
		for n := 0; ; n++ {
			time.Sleep(50 * time.Millisecond)
			jobs <- queue[n%len(queue)]
		}
	}()
	go (&batch{}).run([]string{"a", "", "c"})
	go publish("started")
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
	close(jobs)
}
