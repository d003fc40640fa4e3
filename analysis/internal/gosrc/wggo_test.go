package gosrc

import "testing"

const wgGoSrc = `package main

import "sync"

func run(ch chan int) {
	var wg sync.WaitGroup
	wg.Go(func() {
		<-ch // @gowait
	})
	wg.Wait() // @wgwait
}

func main() { run(make(chan int)) }
`

// TestWaitGroupGoDone checks that a goroutine (*sync.WaitGroup).Go
// started can end a Wait on that WaitGroup: it calls Done once the
// function it runs returns, in sync's own frame, which is not read; on
// one WaitGroup only, the one whose Go started it.
func TestWaitGroupGoDone(t *testing.T) {
	g := load(t, wgGoSrc)
	w := g.wait(t, "waitgroup", g.at("main.run", "wgwait"))
	child := []Frame{g.at("main.run.func1", "gowait"), {Function: wgGoFunc, File: "/goroot/src/sync/waitgroup.go", Line: 239}}
	for _, c := range w.Cases {
		cp, ok := g.can(c, 0, child...)
		if !ok {
			t.Errorf("the goroutine wg.Go started cannot end the Wait (%s)", c.Expr)
		} else if !cp.Bounded || len(cp.Objects) != 1 {
			t.Errorf("the goroutine wg.Go started can end the Wait of %v (bounded %v), want one WaitGroup", cp.Objects, cp.Bounded)
		}
		if _, ok := g.can(c, 0, child[0]); ok {
			t.Errorf("a goroutine running the literal, not through wg.Go, ends the Wait (%s)", c.Expr)
		}
	}
	if len(w.Cases) == 0 {
		t.Fatal("no case at the Wait")
	}
}
