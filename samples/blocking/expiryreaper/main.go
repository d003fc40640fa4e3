// Command expiryreaper is healthy: each session registers an expiry
// callback with time.AfterFunc that sends the session's id to a reaper
// when it expires, half an hour later; until then the reaper waits in its
// range over the expiry channel, and only those callbacks ever send on it.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

type sessions struct {
	expired chan string
	live    map[string]*time.Timer
}

func (s *sessions) open(id string, ttl time.Duration) {
	s.live[id] = time.AfterFunc(ttl, func() { s.expired <- id })
}

func (s *sessions) reap() {
	for id := range s.expired {
		fmt.Fprintln(os.Stderr, "expired", id)
	}
}

func main() {
	s := &sessions{expired: make(chan string), live: map[string]*time.Timer{}}
	for i := 0; i < 5; i++ {
		s.open(fmt.Sprintf("session-%d", i), 30*time.Minute)
	}
	go s.reap()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
