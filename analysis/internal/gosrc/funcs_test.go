package gosrc

import (
	"go/build"
	"strings"
	"testing"
)

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

// TestFuncAtTestBinary checks that a test binary's names for a main
// package's functions (its import path, not "main") find them, and that
// another package's do not.
func TestFuncAtTestBinary(t *testing.T) {
	const file = "/src/srv/main.go"
	line := 0
	for i, l := range strings.Split(inlinedSrc, "\n") {
		if strings.Contains(l, "// @innerwait") {
			line = i + 1
		}
	}
	p := Load(Config{Files: []File{{Path: file, Package: "example.com/srv", Text: []byte(inlinedSrc)}}, Libraries: &Libraries{GoRoot: build.Default.GOROOT}})
	for sym, want := range map[string]string{
		"main.F.func1.1":             "main.F.func1.1",
		"example.com/srv.F.func1.1":  "main.F.func1.1",
		"example.com/srv2.F.func1.1": "none",
	} {
		if f, why := p.FuncAt(sym, file, line); funcName(f) != want {
			t.Errorf("FuncAt(%s): %s (%s), want %s", sym, funcName(f), why, want)
		}
	}
}
