// Command asleepprog deadlocks with no timer pending: a worker selects on
// two channels nobody sends on, and main waits for it. The runtime then
// stops the program with "fatal error: all goroutines are asleep -
// deadlock!" and prints every goroutine, which analysis's tests read.
package main

import "sync"

func waitBoth(a, b chan int, wg *sync.WaitGroup) {
	defer wg.Done()
	select {
	case <-a:
	case <-b:
	}
}

func main() {
	var wg sync.WaitGroup
	wg.Add(1)
	go waitBoth(make(chan int), make(chan int), &wg)
	wg.Wait()
}
