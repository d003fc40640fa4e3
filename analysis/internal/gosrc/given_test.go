package gosrc

import (
	"go/types"
	"testing"
)

// givenSrc has a helper that starts a goroutine running a function
// value (After), called from a frame that makes what the value captures
// (notify), from one that was given it (loop, through its receiver) and
// from a go statement's literal, which is given everything it captures.
const givenSrc = `package main

import (
	"sync"
	"time"
)

type notifier struct {
	mu   sync.Mutex
	cond *sync.Cond
	ticks deep // deep, but holds no reference
}

type deep struct{ a struct{ b struct{ c struct{ d struct{ e struct{ f struct{ g [2]int64 } } } } } } }

func After(f func()) <-chan struct{} {
	ch := make(chan struct{})
	go func() { // @after
		defer close(ch)
		f()
	}()
	return ch
}

func (n *notifier) loop(stop <-chan struct{}) {
	for {
		ch := After(func() { n.cond.Wait() }) // @loop
		select {
		case <-stop:
			return
		case <-ch:
		}
	}
}

func notify(stop <-chan struct{}) {
	n := &notifier{}
	n.cond = sync.NewCond(&n.mu)
	done := After(func() { n.cond.Signal() }) // @notify
	run(func() { n.loop(done) }, stop)
}

func run(f func(), stop <-chan struct{}) {
	f() // @run
	<-stop
}

func startWith(n *notifier) {
	go func() { n.cond.Signal() }() // @handed
}

func main() {
	stop := make(chan struct{})
	go notify(stop)
	startWith(&notifier{})
	time.Sleep(time.Second)
}
`

func TestGiven(t *testing.T) {
	g := load(t, givenSrc, "/src/app")
	cond := g.condClass(t)
	if cond.Escapes() {
		t.Fatal("notifier.cond escapes: the test needs a class that does not")
	}
	for _, c := range []struct {
		fn, at string
		want   bool
	}{
		// After's callers hand it closures over objects their own
		// goroutine made: none was given to the goroutine calling After.
		{"main.After", "after", false},
		{"main.notify", "notify", false},
		{"main.(*notifier).loop", "loop", false},
		{"main.run", "run", false},
		// The goroutine After starts is given f, and what it captures.
		{"main.After.func1", "after", true},
		// startWith's caller may hand it anything: it has no read caller
		// but main, which makes the notifier; its literal, started, is
		// given n.
		{"main.startWith.func1", "handed", true},
	} {
		got, ok := g.p.Given(g.at(c.fn, c.at), cond)
		if !ok || got != c.want {
			t.Errorf("Given(%s, notifier.cond) = %v, %v; want %v", c.fn, got, ok, c.want)
		}
	}
}

// TestScalarReach: a field that holds no reference, however deep its
// type, leads nowhere and does not end a reach walk at its bounds.
func TestScalarReach(t *testing.T) {
	g := load(t, givenSrc, "/src/app")
	f, _ := g.p.FuncAt("main.(*notifier).loop", g.file, g.lines["loop"])
	if f == nil {
		t.Fatal("loop not read")
	}
	r := g.p.reachOf(sigParams(f.sig, true))
	if r.all {
		t.Error("the reach of *notifier hit its bounds: scalar fields are walked")
	}
	if !r.Has(g.condClass(t)) {
		t.Error("the reach of *notifier misses its cond")
	}
	for _, c := range []struct {
		src  string
		want bool
	}{
		{"[4][8]int64", true}, {"struct{ a int; b [2]string }", true},
		{"*int", false}, {"[]int", false}, {"struct{ f func() }", false}, {"any", false},
	} {
		tv, err := types.Eval(g.p.fset, nil, 0, c.src)
		if err != nil {
			t.Fatal(err)
		}
		if got := scalar(tv.Type); got != c.want {
			t.Errorf("scalar(%s) = %v, want %v", c.src, got, c.want)
		}
	}
}

// condClass is the class of the Cond the literal in loop waits on.
func (g *prog) condClass(t *testing.T) Class {
	t.Helper()
	w := g.wait(t, "cond", Frame{Function: "sync.(*Cond).Wait"}, g.at("main.(*notifier).loop.func1", "loop"))
	return w.Cases[0].Obj
}
