// Command standby is healthy: a pool of eight renderers is started at boot
// and kept for later; each waits in a select for a render request or for
// the quit channel main closes at shutdown.
package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

type renderer struct {
	requests chan string
	quit     chan struct{}
}

func (r *renderer) serve(wg *sync.WaitGroup) {
	defer wg.Done()
	for {
		select {
		case <-r.quit:
			return
		case page := <-r.requests:
			_ = len(page)
		}
	}
}

func main() {
	r := &renderer{requests: make(chan string), quit: make(chan struct{})}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go r.serve(&wg)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
	close(r.quit)
	wg.Wait()
}
