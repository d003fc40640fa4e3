// Command sleepersend is healthy: a relay of goroutines waits down a
// chain whose last link sleeps an hour (a scheduled job) and then sends;
// each link passes the value on, so every one of them is woken in turn.
package main

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

func link(n int, out chan<- struct{}) {
	if n == 0 {
		go func() {
			time.Sleep(time.Hour)
			out <- struct{}{}
		}()
		return
	}
	in := make(chan struct{})
	go link(n-1, in)
	<-in
	out <- struct{}{}
}

func main() {
	go link(40, make(chan struct{}, 1))
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
