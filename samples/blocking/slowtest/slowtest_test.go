// Package slowtest is healthy: a long test still in progress. It feeds a
// worker pool one item every 200 ms; idle workers wait on the channel and
// the test runner waits in T.Run for a test that is making progress.
package slowtest

import (
	"sync"
	"testing"
	"time"
)

func worker(items <-chan int, sum *int, mu *sync.Mutex, wg *sync.WaitGroup) {
	defer wg.Done()
	for it := range items {
		mu.Lock()
		*sum += it
		mu.Unlock()
	}
}

func TestSoak(t *testing.T) {
	items := make(chan int)
	var mu sync.Mutex
	var wg sync.WaitGroup
	sum := 0
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go worker(items, &sum, &mu, &wg)
	}
	deadline := time.Now().Add(10 * time.Minute)
	for i := 0; time.Now().Before(deadline); i++ {
		items <- i
		time.Sleep(200 * time.Millisecond)
	}
	close(items)
	wg.Wait()
}
