// Command wgaddcount resizes node pools: it adds the number of pools to a
// WaitGroup but skips starting a goroutine for pools already at their
// size, so the count never drops to zero and the rollout goroutine waits
// forever.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

type pool struct {
	name       string
	size, want int
}

func resize(p *pool, wg *sync.WaitGroup) {
	defer wg.Done()
	p.size = p.want
}

func rollout(pools []*pool, done chan<- string) {
	var wg sync.WaitGroup
	wg.Add(len(pools))
	for _, p := range pools {
		if p.size == p.want {
			continue // bug: counted in Add, never Done
		}
		go resize(p, &wg)
	}
	wg.Wait()
	done <- fmt.Sprint("rolled out ", len(pools), " pools")
}

func main() {
	pools := []*pool{{"a", 1, 3}, {"b", 2, 2}, {"c", 0, 1}}
	done := make(chan string, 1)
	go rollout(pools, done)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	select {
	case msg := <-done:
		fmt.Println(msg)
	case <-sigs:
	}
	<-sigs
}
