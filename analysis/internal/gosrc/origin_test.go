package gosrc

import (
	"slices"
	"strings"
	"testing"
)

const originSrc = `package main

import "sync"

type queue struct{ cond *sync.Cond }

func (q *queue) get() {
	q.cond.L.Lock()
	defer q.cond.L.Unlock()
	q.cond.Wait() // @wait
}

func (q *queue) put() { q.cond.Signal() } // @signal

type getter interface {
	get()
	put()
}

type controller struct {
	a, b getter
}

func (c *controller) signals() {
	for i := 0; i < 10; i++ {
		c.a.put() // @puta
		c.b.put()
	}
}

func each(qs []*queue) {
	for _, q := range qs {
		q.put() // @each
	}
}

func (c *controller) run() {
	go c.a.get()
	go c.b.get()
}

func newQueue() *queue { return &queue{cond: sync.NewCond(&sync.Mutex{})} }

var shared = newQueue()

func start() {
	c := &controller{ // @start
		a: &queue{cond: sync.NewCond(&sync.Mutex{})},
		b: &queue{sync.NewCond(&sync.Mutex{})},
	}
	go c.run()
	c.signals() // @signals
}

func startShared() {
	c := &controller{a: shared, b: &queue{}} // @shared
	c.signals()
}

func startMade() {
	c := &controller{a: newQueue(), b: newQueue()} // @made
	c.signals()
}

type reset struct{ q *queue }

func (r *reset) put() { r.q.put() }

func startReset() {
	r := &reset{q: &queue{cond: sync.NewCond(&sync.Mutex{})}} // @reset
	r.put()
}

func swap(r *reset) { r.q = shared }

func spawn(q *queue) {
	go func() {
		q.put() // @captured
	}()
}

func spawnMoved(q *queue) {
	go func() {
		q.put() // @moved
	}()
	q = shared
}

func main() {
	for i := 0; i < 100; i++ {
		go start()
		go startShared()
		go startMade()
		go startReset()
	}
	swap(&reset{})
	each(nil)
}
`

// TestFreshCalls checks that a goroutine that has not yet made the
// objects a call of its acts on cannot wake a goroutine parked now on
// one of them: start, before its composite literal, signals only Conds
// it will make. Once made, it can. A controller given a package-level
// queue, or queues a function returns, or a struct whose field some
// statement writes again, can reach objects made before.
func TestFreshCalls(t *testing.T) {
	g := load(t, originSrc)
	wait := g.wait(t, "cond", Frame{Function: "sync.(*Cond).Wait"}, g.at("main.(*queue).get", "wait")).Cases[0]
	if cp, ok := g.can(wait, -1, g.at("main.start", "start")); ok {
		t.Errorf("start before making its queues can signal a Cond parked now: %+v", cp)
	}
	if _, ok := g.can(wait, -1, g.at("main.start", "signals")); !ok {
		t.Error("start signalling its own queues cannot wake their waiters")
	}
	for _, mark := range []string{"shared", "made"} {
		if _, ok := g.can(wait, -1, g.at("main.start"+capital(mark), mark)); !ok {
			t.Errorf("%s: a controller with queues made elsewhere cannot signal", mark)
		}
	}
	if _, ok := g.can(wait, -1, g.at("main.startReset", "reset")); !ok {
		t.Error("a struct whose field is written again counts as fresh")
	}
	g = load(t, strings.Replace(originSrc, "r.q = shared", "_ = r.q", 1))
	wait = g.wait(t, "cond", Frame{Function: "sync.(*Cond).Wait"}, g.at("main.(*queue).get", "wait")).Cases[0]
	if cp, ok := g.can(wait, -1, g.at("main.startReset", "reset")); ok {
		t.Errorf("a struct whose field no statement writes again, made later, can signal: %+v", cp)
	}
}

// capital is s with its first letter upper-cased.
func capital(s string) string { return string(s[0]-'a'+'A') + s[1:] }

// TestBoundedObjects checks which objects of a class a goroutine's rest
// can act on: signals reaches its controller's two queues' Conds (fields
// only composite literals set), and, while a put of its loop is in
// progress, that put's own Cond too (the next turn calls it again); a
// goroutine's literal reaches the one queue it captures, unless a
// statement assigns that variable again; a loop over a slice reaches
// any.
func TestBoundedObjects(t *testing.T) {
	g := load(t, originSrc)
	wait := g.wait(t, "cond", Frame{Function: "sync.(*Cond).Wait"}, g.at("main.(*queue).get", "wait")).Cases[0]
	for _, c := range []struct {
		frames []Frame
		want   []string
	}{
		{[]Frame{g.at("main.(*controller).signals", "puta")}, []string{"0.0.a.cond", "0.0.b.cond"}},
		{[]Frame{g.at("main.(*queue).put", "signal"), g.at("main.(*controller).signals", "puta")}, []string{"0.0.cond", "1.0.a.cond", "1.0.b.cond"}},
		{[]Frame{g.at("main.each", "each")}, nil},
		{[]Frame{g.at("main.spawn.func1", "captured")}, []string{"0.0.cond"}},
		{[]Frame{g.at("main.spawnMoved.func1", "moved")}, nil},
	} {
		cp, ok := g.can(wait, -1, c.frames...)
		if !ok {
			t.Fatalf("%v cannot signal", c.frames)
		}
		got := slices.Sorted(slices.Values(cp.Objects))
		if cp.Bounded != (c.want != nil) || !slices.Equal(got, c.want) {
			t.Errorf("%v: bounded %v, objects %v; want %v", c.frames, cp.Bounded, got, c.want)
		}
	}
}
