// Command sleepers is healthy: retry loops back off in time.Sleep between
// attempts at a dependency that is still starting, and a janitor sleeps a
// minute between sweeps.
package main

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"
)

var errNotReady = errors.New("not ready")

func connect(name string) error { return errNotReady }

func retryForever(name string) {
	backoff := 5 * time.Second
	for connect(name) != nil {
		time.Sleep(backoff)
		if backoff < time.Minute {
			backoff *= 2
		}
	}
}

func janitor() {
	for {
		time.Sleep(time.Minute)
	}
}

func main() {
	for _, dep := range []string{"etcd", "webhook", "metrics"} {
		go retryForever(dep)
	}
	go janitor()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
