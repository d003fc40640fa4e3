package gosrc

import (
	"go/build"
	"go/types"
	"strings"
	"testing"
)

// prog is a test program: its file, and the line of each "// @name"
// marker in it.
type prog struct {
	p     *Program
	file  string
	lines map[string]int
}

// load reads src as package main in /src/main.go, with this machine's Go
// root for the standard library (bodies read for the dirs given).
func load(t *testing.T, src string, bodies ...string) *prog {
	t.Helper()
	const file = "/src/app/main.go"
	lines := map[string]int{}
	for i, l := range strings.Split(src, "\n") {
		if _, m, ok := strings.Cut(l, "// @"); ok {
			lines[strings.Fields(m)[0]] = i + 1
		}
	}
	libs := &Libraries{GoRoot: build.Default.GOROOT}
	p := Load(Config{Files: []File{{Path: file, Package: "main", Text: []byte(src)}}, Libraries: libs, Bodies: bodies})
	return &prog{p: p, file: file, lines: lines}
}

// at is a frame of fn at marker m.
func (g *prog) at(fn, m string) Frame {
	l, ok := g.lines[m]
	if !ok {
		panic("no marker " + m)
	}
	return Frame{Function: fn, File: g.file, Line: l}
}

// wait finds the wait of a goroutine whose leaf user frame is fr.
func (g *prog) wait(t *testing.T, kind string, frames ...Frame) *Wait {
	t.Helper()
	w, why := g.p.WaitAt(frames, kind)
	if w == nil {
		t.Fatalf("no wait at %v: %s", frames[0], why)
	}
	return w
}

// can reports whether a goroutine with frames can release case c, and
// the capability that does.
func (g *prog) can(c Case, skip int, frames ...Frame) (Cap, bool) {
	keys := g.p.Releasers(c)
	fut := g.p.Track(keys).Future(frames, skip)
	for _, cp := range fut.Caps {
		for _, k := range keys {
			if cp.Key == k {
				return cp, true
			}
		}
	}
	return Cap{}, false
}

const feederSrc = `package main

import (
	"sync"
	"time"
)

var global = make(chan int)

func feeder(jobs chan int, q []int) {
	for _, j := range q {
		jobs <- j // @feed
	}
}

func collect(wg *sync.WaitGroup, out chan int) {
	wg.Wait() // @wgwait
	close(out)
}

func worker(jobs chan int, wg *sync.WaitGroup) {
	defer wg.Done()
	for j := range jobs { // @range
		_ = j
	}
}

func main() {
	jobs := make(chan int)
	var wg sync.WaitGroup
	wg.Add(1)
	go worker(jobs, &wg)
	go feeder(jobs, []int{1, 2})
	go func() {
		<-global // @global
	}()
	go func() {
		time.Sleep(time.Hour) // @sleep
		jobs <- 1
	}()
	out := make(chan int)
	go collect(&wg, out)
	<-out // @mainwait
}
`

// TestWhoCanRelease checks the core questions on one program: a worker's
// range over jobs is released by the feeder (its send) and by the
// sleeper (after its sleep), not by the goroutine on the package-level
// channel; nothing in the program sends on that channel; the WaitGroup
// is released only by the worker's deferred Done.
func TestWhoCanRelease(t *testing.T) {
	g := load(t, feederSrc)
	worker := g.wait(t, "chan receive", g.at("main.worker", "range"))
	if len(worker.Cases) != 1 || worker.Cases[0].Op != OpRecv || worker.Cases[0].Expr != "jobs" {
		t.Fatalf("worker's wait: %+v", worker.Cases)
	}
	if cp, ok := g.can(worker.Cases[0], -1, g.at("main.feeder", "feed")); !ok || cp.Line != g.lines["feed"] {
		t.Errorf("the feeder cannot release the worker: %+v %v", cp, ok)
	}
	sleeper := []Frame{{Function: "time.Sleep"}, g.at("main.main.func2", "sleep")}
	if _, ok := g.can(worker.Cases[0], -1, sleeper...); !ok {
		t.Error("the sleeper cannot release the worker")
	}
	if _, ok := g.can(worker.Cases[0], 0, g.at("main.main.func1", "global")); ok {
		t.Error("the goroutine on the global channel can release the worker")
	}
	glob := g.wait(t, "chan receive", g.at("main.main.func1", "global"))
	if got := glob.Cases[0].Obj.Globals(); len(got) != 1 || got[0] != "main.global" {
		t.Errorf("globals of the global channel's class: %v", got)
	}
	for _, who := range [][]Frame{{g.at("main.feeder", "feed")}, sleeper, {g.at("main.worker", "range")}, {g.at("main.main", "mainwait")}} {
		if cp, ok := g.can(glob.Cases[0], -1, who...); ok {
			t.Errorf("%v can release the global channel's receiver: %+v", who[len(who)-1], cp)
		}
	}
	wg := g.wait(t, "waitgroup", Frame{Function: "sync.(*WaitGroup).Wait"}, g.at("main.collect", "wgwait"))
	if _, ok := g.can(wg.Cases[0], -1, g.at("main.worker", "range")); !ok {
		t.Error("the worker's deferred Done cannot release the WaitGroup")
	}
	if _, ok := g.can(wg.Cases[0], -1, g.at("main.feeder", "feed")); ok {
		t.Error("the feeder can release the WaitGroup")
	}
}

const lockSrc = `package main

import "sync"

var mu sync.Mutex

func critical() {
	mu.Lock()
	mu.Unlock()
}

func holder(ch chan int) {
	mu.Lock()
	<-ch // @holderwait
	mu.Unlock()
}

func user() {
	for {
		critical() // @usercall
	}
}

func waiter() {
	mu.Lock() // @waiterlock
	mu.Unlock()
}

func deferred() {
	mu.Lock()
	defer mu.Unlock()
	select {} // @deferwait
}

func main() {}
`

// TestHeldLocks checks that only a goroutine whose rest unlocks a lock it
// did not lock on the way (it holds it) can release a Lock waiter: not
// one that will lock and unlock it afresh, nor another waiter.
func TestHeldLocks(t *testing.T) {
	g := load(t, lockSrc)
	w := g.wait(t, "lock", Frame{Function: "sync.(*Mutex).Lock"}, g.at("main.waiter", "waiterlock"))
	c := w.Cases[0]
	if _, ok := g.can(c, 0, g.at("main.holder", "holderwait")); !ok {
		t.Error("the holder parked with the lock cannot release it")
	}
	if _, ok := g.can(c, 0, g.at("main.deferred", "deferwait")); !ok {
		t.Error("the holder whose Unlock is deferred cannot release it")
	}
	if cp, ok := g.can(c, -1, g.at("main.user", "usercall")); ok {
		t.Errorf("a goroutine that locks and unlocks afresh can release it: %+v", cp)
	}
	if cp, ok := g.can(c, 1, Frame{Function: "sync.(*Mutex).Lock"}, g.at("main.waiter", "waiterlock")); ok {
		t.Errorf("another waiter can release it: %+v", cp)
	}
}

const shapesSrc = `package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"time"
)

type cache struct {
	mu    sync.Mutex
	group func(func())
}

func (c *cache) get() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.group(func() { // @litcall
		select {} // @litwait
	})
}

func ticking(done chan struct{}) {
	t := time.NewTicker(time.Second)
	for {
		select { // @tick
		case <-t.C:
		case <-done:
			return
		}
	}
}

func watch(ctx context.Context) {
	<-ctx.Done() // @ctxwait
}

func root() {
	ctx, cancel := context.WithCancel(context.Background())
	go watch(ctx)
	time.Sleep(time.Minute) // @cancelsleep
	cancel()
}

func signals() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	<-sigs // @sigwait
}

func main() {}
`

// TestShapes checks what the program says of common waits: a frame at a
// call line shared with a literal is the caller's (it holds the lock its
// pending defer unlocks), a ticker's channel is a timer, a context's
// Done is ended by its cancel function's call, and a channel
// signal.Notify feeds is a signal's.
func TestShapes(t *testing.T) {
	g := load(t, shapesSrc)
	f, why := g.p.FuncAt("main.(*cache).get", g.file, g.lines["litcall"])
	if f == nil || f.Name != "main.(*cache).get" {
		t.Fatalf("the frame of get at its call line: %v %s", f, why)
	}
	lit, _ := g.p.FuncAt("main.(*cache).get.func1", g.file, g.lines["litwait"])
	if lit == nil || lit.Name != "main.(*cache).get.func1" {
		t.Fatalf("the literal's frame: %v", lit)
	}
	lock := Case{Op: OpLock, Obj: g.p.class(g.p.flow.varNode(fieldOf(t, g.p, "cache", "mu")))}
	holder := []Frame{g.at("main.(*cache).get.func1", "litwait"), g.at("main.(*cache).get", "litcall")}
	if _, ok := g.can(lock, 0, holder...); !ok {
		t.Error("the goroutine in the literal, under get's lock, cannot release it")
	}
	tick := g.wait(t, "select", g.at("main.ticking", "tick"))
	if !tick.Cases[0].Obj.Timer() || tick.Cases[1].Obj.Timer() {
		t.Errorf("ticker case timer=%v, done case timer=%v", tick.Cases[0].Obj.Timer(), tick.Cases[1].Obj.Timer())
	}
	ctxw := g.wait(t, "chan receive", g.at("main.watch", "ctxwait"))
	if _, ok := g.can(ctxw.Cases[0], -1, Frame{Function: "time.Sleep"}, g.at("main.root", "cancelsleep")); !ok {
		t.Error("the goroutine that will call cancel cannot end the wait on ctx.Done()")
	}
	if timer, _, ok := ctxw.Cases[0].Obj.DoneOf(); !ok || timer {
		t.Errorf("ctx.Done(): a Done channel %v, with a deadline %v", ok, timer)
	}
	sig := g.wait(t, "chan receive", g.at("main.signals", "sigwait"))
	if !sig.Cases[0].Obj.Signal() {
		t.Error("the channel signal.Notify feeds is not a signal's")
	}
}

// fieldOf finds a struct field of the program's package main.
func fieldOf(t *testing.T, p *Program, typ, field string) *types.Var {
	t.Helper()
	for _, k := range p.order {
		if k.path != "main" {
			continue
		}
		tn, _ := k.types.Scope().Lookup(typ).(*types.TypeName)
		st, _ := tn.Type().Underlying().(*types.Struct)
		for i := 0; st != nil && i < st.NumFields(); i++ {
			if st.Field(i).Name() == field {
				return st.Field(i)
			}
		}
	}
	t.Fatalf("no field %s.%s", typ, field)
	return nil
}
