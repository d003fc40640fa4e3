package gosrc

import "testing"

const gowrapSrc = `package main

type watcher struct{ events chan int }

func (w *watcher) run() {
	w.events <- 1
}

func watch() int {
	w := &watcher{events: make(chan int)}
	go w.run() // @go
	return <-w.events // @wait
}

func ping() int {
	ch := make(chan int)
	go func(x int) { // @golit
		ch <- x
	}(
		42,
	)
	return <-ch // @pingwait
}

func main() { watch(); ping() }
`

// TestUnstartedGo checks that a goroutine shown only in its go
// statement's wrapper will run the function the statement calls: it can
// send what its creator waits for, and was started with what reaches it;
// the wrapper's line is its go statement's first, whatever lines the
// call spans.
func TestUnstartedGo(t *testing.T) {
	g := load(t, gowrapSrc)
	w := g.wait(t, "chan receive", g.at("main.watch", "wait"))
	unstarted := []Frame{g.at("main.watch.gowrap1", "go"), {Function: "runtime.goexit"}}
	if cp, ok := g.can(w.Cases[0], -1, unstarted...); !ok || cp.Line != g.lines["go"] {
		t.Errorf("the unstarted goroutine cannot send on events: %+v %v", cp, ok)
	}
	r, ok := g.p.EntryReach(unstarted)
	if !ok || !r.Has(g.p.class(w.Cases[0].Obj.n)) {
		t.Errorf("the unstarted goroutine was not started with the watcher's channel (ok %v)", ok)
	}
	lit := g.wait(t, "chan receive", g.at("main.ping", "pingwait"))
	if _, ok := g.can(lit.Cases[0], -1, g.at("main.ping.gowrap1", "golit"), Frame{Function: "runtime.goexit"}); !ok {
		t.Error("the unstarted goroutine of a go statement over lines cannot send on ch")
	}
	if _, ok := g.can(w.Cases[0], -1, g.at("main.watch.gowrap1", "wait")); ok {
		t.Error("a wrapper at a line with no go statement can send on events")
	}
}
