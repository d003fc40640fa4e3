package gosrc

import (
	"fmt"
	"strings"
	"testing"
)

// handoffSrc hands a channel made in one goroutine to another that does
// not descend from it, the way net/http's readLoop hands the caller a
// response whose Body's function waits on a channel only readLoop
// sends on: inside a struct value sent on a channel the receiver was
// given, with the channel captured by a function stored in a field
// behind an interface.
const handoffSrc = `package main

import "io"

type signal struct {
	fn func() error
}

func (s *signal) Read(p []byte) (int, error) { return 0, s.fn() }

type response struct{ body io.Reader }

type result struct{ res *response }

func loop(out chan result) {
	eofc := make(chan struct{})
	for {
		body := &signal{fn: func() error {
			<-eofc // @wait
			return nil
		}}
		out <- result{res: &response{body: body}}
		eofc <- struct{}{}
	}
}

func main() {
	out := make(chan result)
	go loop(out)
	r := <-out
	r.res.body.Read(nil)
}
`

// TestSentEscapes checks that what a value sent on a channel leads to
// escapes, though the channel is no package-level variable: its
// receiver need not descend from the goroutine that made it.
func TestSentEscapes(t *testing.T) {
	g := load(t, handoffSrc)
	w := g.wait(t, "chan receive", g.at("main.loop.func1", "wait"))
	if c := g.p.class(w.Cases[0].Obj.n); !c.Escapes() {
		t.Errorf("eofc, reached from a value sent on a channel, does not escape")
	}
}

// TestManyDynamicTypes checks that a class holding many dynamic types
// keeps them all: a call through it reaches the method of the last one
// (an interface every error flows into holds a hundred types in a
// service using net/http), and what that type's fields hold is reached.
func TestManyDynamicTypes(t *testing.T) {
	var b strings.Builder
	b.WriteString("package main\n\ntype doer interface{ do() }\n\nvar done = make(chan int)\n\n")
	const n = 100
	for i := range n {
		fmt.Fprintf(&b, "type t%d struct{ ch chan int }\n\nfunc (x t%d) do() {", i, i)
		if i == n-1 {
			b.WriteString(" done <- 1 // @send\n")
		}
		b.WriteString("}\n\n")
	}
	b.WriteString("func run(d doer) {\n\td.do() // @call\n}\n\nfunc main() {\n\tvar d doer\n")
	for i := range n {
		fmt.Fprintf(&b, "\td = t%d{}\n", i)
	}
	b.WriteString("\trun(d)\n\t<-done // @recv\n}\n")
	g := load(t, b.String())
	w := g.wait(t, "chan receive", g.at("main.main", "recv"))
	if _, ok := g.can(w.Cases[0], -1, g.at("main.run", "call")); !ok {
		t.Errorf("a call through an interface holding %d types does not reach the last one's send", n)
	}
}
