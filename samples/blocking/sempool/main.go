// Command sempool is healthy: a dispatcher starts a goroutine per task and
// a channel semaphore lets four run at once; the rest wait briefly to
// acquire, and every task releases its slot.
package main

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

func runTask(sem chan struct{}, id int) {
	sem <- struct{}{}
	defer func() { <-sem }()
	time.Sleep(40 * time.Millisecond)
	_ = id
}

func dispatch(sem chan struct{}) {
	for id := 0; ; id++ {
		go runTask(sem, id)
		time.Sleep(10 * time.Millisecond)
	}
}

func main() {
	sem := make(chan struct{}, 4)
	go dispatch(sem)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
