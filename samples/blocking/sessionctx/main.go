// Command sessionctx opens a keepalive goroutine per session that stops
// when the session's context is cancelled; open never hands the cancel
// function to anyone, so every keepalive outlives its session.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

type session struct {
	id   int
	ping chan struct{}
}

func (s *session) keepalive(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.ping:
		}
	}
}

func open(ctx context.Context, id int) *session {
	s := &session{id: id, ping: make(chan struct{})}
	sctx, cancel := context.WithTimeout(ctx, time.Hour)
	_ = cancel // bug: never called; the hour is the only way out
	go s.keepalive(sctx)
	return s
}

func main() {
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		s := open(ctx, i)
		fmt.Fprintln(os.Stderr, "session", s.id, "closed")
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
