package main

import (
	"context"
	"errors"
	"io"
	"syscall"
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

// TestSignalExitStatus: a command a signal stopped where it stood exits
// 128 plus the signal's number; without a signal as its cause, 1.
func TestSignalExitStatus(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(signalled{syscall.SIGINT})
	block := make(chan struct{})
	defer close(block)
	err := withGrace(ctx, time.Millisecond, func() error { <-block; return nil })
	if code := exitCode(err, io.Discard); code != 130 {
		t.Errorf("stopped by SIGINT: exit %d (%v), want 130", code, err)
	}
	plain, cancelPlain := context.WithCancel(context.Background())
	cancelPlain()
	err = withGrace(plain, time.Millisecond, func() error { <-block; return nil })
	if code := exitCode(err, io.Discard); code != 1 || !errors.Is(err, errStopped) {
		t.Errorf("stopped without a signal: exit %d (%v), want 1 and errStopped", code, err)
	}
}

// TestStopGraceFrom: LEAKSCOPE_STOP_GRACE sets the grace; anything but a
// positive duration leaves the default.
func TestStopGraceFrom(t *testing.T) {
	for env, want := range map[string]time.Duration{"": stopGrace, "30s": 30 * time.Second, "-1s": stopGrace, "soon": stopGrace} {
		if got := stopGraceFrom(env); got != want {
			t.Errorf("stopGraceFrom(%q) = %v, want %v", env, got, want)
		}
	}
}
