// Command leasewait is healthy: each lease holder waits for its lease to
// run out on the Done channel of a context with a ten-minute deadline,
// then hands the lease back. Nothing cancels those contexts early; the
// runtime's timer closes each Done channel when its deadline passes.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

type lease struct {
	name string
	ttl  time.Duration
}

// hold keeps the lease until its deadline, then releases it.
func (l lease) hold(released chan<- string) {
	ctx, cancel := context.WithTimeout(context.Background(), l.ttl)
	defer cancel()
	<-ctx.Done()
	released <- l.name
}

func main() {
	released := make(chan string, 8)
	for i := 0; i < 8; i++ {
		go lease{name: fmt.Sprintf("shard-%d", i), ttl: 10 * time.Minute}.hold(released)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
