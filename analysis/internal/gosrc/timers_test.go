package gosrc

import "testing"

const timersSrc = `package main

import "time"

func main() {
	expired := make(chan string)
	other := make(chan string)
	time.AfterFunc(time.Hour, func() { expired <- "session-1" }) // @after
	go func() {
		for id := range expired { // @expired
			_ = id
		}
	}()
	go func() {
		<-other // @other
	}()
	time.Sleep(time.Second)
}
`

// TestTimerReleases checks that a function handed to time.AfterFunc is
// taken as able to release what it operates on, and nothing else.
func TestTimerReleases(t *testing.T) {
	g := load(t, timersSrc)
	check := func(fn, m string, want bool) {
		t.Helper()
		got := g.timerReleases(t, fn, m)
		if want && (len(got) != 1 || got[0].Line != g.lines["after"]) || !want && len(got) > 0 {
			t.Errorf("%s: timer releases %+v, want one at line %d: %v", fn, got, g.lines["after"], want)
		}
	}
	check("main.main.func2", "expired", true)
	check("main.main.func3", "other", false)
}

// timerReleases lists the timer callbacks that can end the receive of
// the goroutine whose leaf frame is fn at marker m.
func (g *prog) timerReleases(t *testing.T, fn, m string) []Stmt {
	t.Helper()
	w := g.wait(t, "chan receive", g.at(fn, m))
	keys := g.p.Releasers(w.Cases[0])
	q := g.p.Track(keys)
	var got []Stmt
	for _, k := range keys {
		got = append(got, q.TimerReleases(k)...)
	}
	return got
}

const deadlineSrc = `package main

import (
	"context"
	"time"
)

func hold() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	<-ctx.Done() // @hold
}

func keepalive(ctx context.Context, ping chan int) {
	select { // @keep
	case <-ctx.Done():
	case <-ping:
	}
}

func open() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	_ = cancel
	go keepalive(ctx, make(chan int))
}

func main() {
	go hold()
	open()
}
`

// TestDeadlineCancel checks what ends a wait on a deadline context's
// Done channel: its deadline, and a cancel function only where some
// statement calls one (a dropped cancel leaves the deadline alone).
func TestDeadlineCancel(t *testing.T) {
	g := load(t, deadlineSrc)
	for _, c := range []struct {
		fn, m  string
		kind   string
		called bool
	}{
		{"main.hold", "hold", "chan receive", true},
		{"main.keepalive", "keep", "select", false},
	} {
		w := g.wait(t, c.kind, g.at(c.fn, c.m))
		cs := w.Cases[0]
		timer, _, ok := cs.Obj.DoneOf()
		if !ok || !timer || cs.Obj.CancelCalled() != c.called {
			t.Errorf("%s: %s: deadline %v (a Done channel: %v), cancel called %v; want a deadline, cancel called %v", c.fn, cs.Expr, timer, ok, cs.Obj.CancelCalled(), c.called)
		}
	}
}

const ctxAfterSrc = `package main

import (
	"context"
	"time"
)

func main() {
	stopped := make(chan int)
	never := make(chan int)
	ctx, cancel := context.WithCancel(context.Background())
	context.AfterFunc(ctx, func() { stopped <- 1 }) // @stopafter
	context.AfterFunc(context.Background(), func() { never <- 1 })
	go func() {
		<-stopped // @stopped
	}()
	go func() {
		<-never // @never
	}()
	time.Sleep(time.Second)
	cancel()
}
`

// TestContextAfterFunc checks that a function handed to context.AfterFunc
// is taken as able to release what it operates on when its context can
// be done (its cancel is called), and not when nothing can close it.
func TestContextAfterFunc(t *testing.T) {
	g := load(t, ctxAfterSrc)
	if got := g.timerReleases(t, "main.main.func3", "stopped"); len(got) != 1 || got[0].Line != g.lines["stopafter"] {
		t.Errorf("the callback of a context whose cancel is called: releases %+v, want one at line %d", got, g.lines["stopafter"])
	}
	if got := g.timerReleases(t, "main.main.func4", "never"); len(got) > 0 {
		t.Errorf("the callback of context.Background(), which nothing closes: releases %+v, want none", got)
	}
}
