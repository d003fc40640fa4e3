package analysis

import (
	"strings"
	"testing"

	"github.com/leakscope/leakscope/ingest/schema"
)

// TestHeldBySelf: a lock wait is on the waiter's own lock only when an
// earlier statement that certainly ran took the same lock and nothing
// released it in between; a deferred release, a branch that may not have
// run, a closure and a second read lock do not count.
func TestHeldBySelf(t *testing.T) {
	for _, c := range []struct {
		name, text string
		held       bool
	}{
		{"upgrade", `func f(c *cache) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	c.mu.Lock() // here
}`, true},
		{"twice", `func f(c *cache) {
	c.mu.Lock()
	if c.n > 0 {
		c.mu.Lock() // here
	}
}`, true},
		{"released", `func f(c *cache) {
	c.mu.RLock()
	v := c.v
	c.mu.RUnlock()
	c.mu.Lock() // here
	_ = v
}`, false},
		{"other lock", `func f(a, b *cache) {
	a.mu.Lock()
	b.mu.Lock() // here
}`, false},
		{"in a branch", `func f(c *cache, ok bool) {
	if ok {
		c.mu.Lock()
	}
	c.mu.Lock() // here
}`, false},
		{"two read locks", `func f(c *cache) {
	c.mu.RLock()
	c.mu.RLock() // here
}`, false},
		{"closure", `func f(c *cache) {
	c.mu.Lock()
	go func() {
		c.mu.Lock() // here
	}()
}`, false},
	} {
		lines := strings.Split(c.text, "\n")
		src := &sourceCode{funcs: map[[2]string]*funcSource{
			{"f.go", "main.f"}: {start: 1, end: len(lines), lines: lines, status: schema.SourceOK},
		}}
		got := src.heldBySelf(Frame{Function: "main.f", File: "f.go", Line: markedLine(t, c.text)})
		if (got != "") != c.held {
			t.Errorf("%s: heldBySelf = %q, want held %v", c.name, got, c.held)
		}
	}
	if got := (*sourceCode)(nil).heldBySelf(Frame{Function: "main.f", File: "f.go", Line: 3}); got != "" {
		t.Errorf("without source: %q", got)
	}
}

// TestEndlessTickerLoop: a range over a Ticker's C whose body cannot
// leave the loop never ends; a return, break or panic in the body, or a
// channel other than a ticker's, makes it an ordinary loop.
func TestEndlessTickerLoop(t *testing.T) {
	for _, c := range []struct {
		name, text string
		endless    bool
	}{
		{"no way out", `func f(n *int) {
	t := time.NewTicker(time.Second)
	for range t.C { // here
		*n++
	}
}`, true},
		{"return", `func f(n *int) {
	t := time.NewTicker(time.Second)
	for range t.C { // here
		if *n > 3 {
			return
		}
	}
}`, false},
		{"break", `func f(n *int) {
	t := time.NewTicker(time.Second)
	for range t.C { // here
		if *n > 3 {
			break
		}
	}
}`, false},
		{"panic", `func f(n *int) {
	t := time.NewTicker(time.Second)
	for range t.C { // here
		if *n > 3 {
			panic("done")
		}
	}
}`, false},
		{"closure return", `func f(n *int) {
	t := time.NewTicker(time.Second)
	for range t.C { // here
		func() { return }()
	}
}`, true},
		{"plain channel", `func f(ch chan int) {
	for range ch { // here
	}
}`, false},
	} {
		w := keptStmt(t, c.text, "chan receive")
		if w.endless != c.endless {
			t.Errorf("%s: endless = %v, want %v (statement %q %+v, %s)", c.name, w.endless, c.endless, w.kind, w.cases, w.why)
		}
	}
}
