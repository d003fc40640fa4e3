// Package streamleak: every streaming call starts a forwarder that copies
// messages into the caller's receive channel; callers that cancel stop
// reading, and the forwarders have no way to notice, so each cancelled
// stream leaves a goroutine blocked on send. The test opens fifty.
package streamleak

import (
	"context"
	"sync"
	"testing"
)

type stream struct {
	recv chan []byte
}

func forward(src <-chan []byte, s *stream, wg *sync.WaitGroup) {
	defer wg.Done()
	for msg := range src {
		s.recv <- msg // bug: no select on the stream's context
	}
}

func openStream(ctx context.Context, src <-chan []byte, wg *sync.WaitGroup) *stream {
	s := &stream{recv: make(chan []byte)}
	wg.Add(1)
	go forward(src, s, wg)
	return s
}

func TestCancelledStreams(t *testing.T) {
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		src := make(chan []byte, 2)
		src <- []byte("header")
		src <- []byte("chunk")
		s := openStream(ctx, src, &wg)
		<-s.recv // read the header, then give up
		cancel()
	}
	wg.Wait()
}
