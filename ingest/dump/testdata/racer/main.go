// racer has a data race the race detector reports: two goroutines write
// a counter without a lock.
package main

import (
	"fmt"
	"sync"
)

var hits int

func record() { hits++ }

func main() {
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			record()
		}()
	}
	wg.Wait()
	fmt.Println(hits)
}
