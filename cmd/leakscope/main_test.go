package main

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWithGrace: after a signal (ctx done), a command that stops on its
// own returns its error, and one that does not is left behind with
// errStopped once the grace has passed.
func TestWithGrace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	block := make(chan struct{})
	defer close(block)
	if err := withGrace(ctx, time.Millisecond, func() error { <-block; return nil }); !errors.Is(err, errStopped) {
		t.Errorf("a command that ignores the signal: %v, want errStopped", err)
	}
	own := errors.New("capture stopped: bundle closed")
	if err := withGrace(ctx, time.Hour, func() error { <-ctx.Done(); return own }); err != own {
		t.Errorf("a command that stops on its own: %v, want its error", err)
	}
	if err := withGrace(context.Background(), time.Nanosecond, func() error { time.Sleep(time.Millisecond); return nil }); err != nil {
		t.Errorf("no signal: %v, want the command's nil", err)
	}
}
