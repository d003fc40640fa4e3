// Command neverclosed imports records with four consumers ranging over a
// jobs channel; the producer returns without closing it, so the consumers
// never leave their range loop and main waits for them forever.
package main

import (
	"fmt"
	"strings"
	"sync"
)

type importer struct {
	jobs     chan string
	mu       sync.Mutex
	imported int
}

func (im *importer) produce(records []string) {
	for _, r := range records {
		im.jobs <- r
	}
	// bug: close(im.jobs) is missing
}

func (im *importer) consume(wg *sync.WaitGroup) {
	defer wg.Done()
	for r := range im.jobs {
		im.mu.Lock()
		im.imported += len(strings.Fields(r))
		im.mu.Unlock()
	}
}

func main() {
	im := &importer{jobs: make(chan string)}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go im.consume(&wg)
	}
	go im.produce([]string{"a b", "c", "d e f"})
	wg.Wait()
	fmt.Println("imported", im.imported)
}
