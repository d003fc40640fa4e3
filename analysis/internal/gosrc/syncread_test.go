package gosrc

import (
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const onceSrc = `package main

import "sync"

type client struct {
	once  sync.Once
	ready chan struct{}
}

func (c *client) dial() {
	<-c.ready // @ready
}

func (c *client) call() {
	c.once.Do(c.dial) // @do
}

func main() {
	c := &client{ready: make(chan struct{})}
	go c.call()
	c.call()
}
`

// TestOnceHolder checks that sync's own code beyond the modelled
// primitives is read: a caller of once.Do waits on the Once's mutex in
// doSlow, and the goroutine whose function runs inside doSlow holds it
// (its deferred Unlock is pending), while one yet to call Do does not.
func TestOnceHolder(t *testing.T) {
	syncDir := filepath.Join(build.Default.GOROOT, "src", "sync")
	g := load(t, onceSrc, syncDir)
	once := filepath.Join(syncDir, "once.go")
	lock, call := lineOf(t, once, "o.m.Lock()"), lineOf(t, once, "f()")
	doSlow := func(line int) Frame { return Frame{Function: "sync.(*Once).doSlow", File: once, Line: line} }
	w := g.wait(t, "lock", Frame{Function: "sync.(*Mutex).Lock", File: filepath.Join(syncDir, "mutex.go"), Line: 1},
		doSlow(lock), g.at("main.(*client).call", "do"))
	if w.Func.Name != "sync.(*Once).doSlow" || len(w.Cases) != 1 || !strings.Contains(w.Cases[0].Expr, "o.m") {
		t.Fatalf("the wait is %s %+v, want o.m's Lock in sync.(*Once).doSlow", w.Func.Name, w.Cases)
	}
	if _, ok := g.can(w.Cases[0], 0, g.at("main.(*client).dial", "ready"), doSlow(call), g.at("main.(*client).call", "do")); !ok {
		t.Error("the goroutine running the Once's function does not release the Once's mutex")
	}
	if _, ok := g.can(w.Cases[0], -1, g.at("main.(*client).call", "do")); ok {
		t.Error("a goroutine yet to call Do releases the Once's mutex")
	}
}

// TestMachinery checks which sync frames are the blocking call's
// machinery and which are code read as Go.
func TestMachinery(t *testing.T) {
	for fn, want := range map[string]bool{
		"sync.(*Mutex).Lock": true, "sync.(*RWMutex).RLock": true, "sync.(*WaitGroup).Go.func1": true,
		"sync.(*Cond).Wait": true, "sync.runtime_SemacquireMutex": true, "internal/sync.(*Mutex).lockSlow": true,
		"sync.(*Once).doSlow": false, "sync.(*Map).LoadOrStore": false, "sync.OnceFunc.func2": false, "main.main": false,
	} {
		if got := Machinery(fn); got != want {
			t.Errorf("Machinery(%s) = %v, want %v", fn, got, want)
		}
	}
}

// lineOf is the first line of file whose statement is s.
func lineOf(t *testing.T, file, s string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == s {
			return i + 1
		}
	}
	t.Fatalf("%s holds no %q", file, s)
	return 0
}
