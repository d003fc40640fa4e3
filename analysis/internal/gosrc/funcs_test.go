package gosrc

import "testing"

// inlinedSrc builds (go build, Go 1.26) to main.F.F.func1.func2: the
// literal given to run, made in F once f is inlined there; and
// main.H.func1.G.1: G's literal, made in H's literal once G is inlined
// there.
const inlinedSrc = `package main

func run(fn func()) { go fn() }

func F(done chan bool) {
	f := func() {
		run(func() {
			done <- true // @innerwait
		})
	}
	f()
}

func G(ch chan int) func() {
	return func() {
		<-ch // @gwait
	}
}

func H(ch chan int) {
	go func() {
		w := G(ch)
		go w()
	}()
}

func main() {}
`

// TestFuncAtInlined checks the function of frames whose symbols name
// the functions they were inlined through: main.F.F.func1.func2 is two
// literals deep in F, main.H.func1.G.1 one deep in G.
func TestFuncAtInlined(t *testing.T) {
	g := load(t, inlinedSrc)
	for _, c := range []struct{ sym, marker, want string }{
		{"main.F.F.func1.func2", "innerwait", "main.F.func1.1"},
		{"main.F.func1.1", "innerwait", "main.F.func1.1"},
		{"main.H.func1.G.1", "gwait", "main.G.func1"},
	} {
		if f, why := g.p.FuncAt(c.sym, g.file, g.lines[c.marker]); f == nil || f.Name != c.want {
			t.Errorf("FuncAt(%s) at @%s: %s (%s), want %s", c.sym, c.marker, funcName(f), why, c.want)
		}
	}
}

func funcName(f *Func) string {
	if f == nil {
		return "none"
	}
	return f.Name
}
