//go:build ignore

// deadlock blocks every goroutine it has on a channel or a lock, with no
// timer pending, so the runtime stops it with "fatal error: all
// goroutines are asleep - deadlock!" and prints every goroutine. The
// dump reader's tests run it for that crash.
package main

import "sync"

func main() {
	var mu sync.Mutex
	var wg sync.WaitGroup
	never := make(chan int)
	mu.Lock()
	wg.Add(2)
	go func() { defer wg.Done(); mu.Lock() }()
	go func() { defer wg.Done(); <-never }()
	wg.Wait()
}
