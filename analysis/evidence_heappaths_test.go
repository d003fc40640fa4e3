package analysis

import (
	"slices"
	"testing"
)

// TestCallPaths: an allocating line reached from three callers names the
// three, largest first; paths that part only by line name the lines;
// stacks through one caller are told apart where they part; a single
// stack names none.
func TestCallPaths(t *testing.T) {
	fr := func(fns ...string) []Frame {
		out := make([]Frame, len(fns))
		for i, f := range fns {
			out[i] = Frame{Function: f, File: "x.go", Line: 10 + i}
		}
		return out
	}
	st := func(id int64, last float64, frames []Frame) *heapStack {
		return &heapStack{id: id, frames: frames, bytes: []float64{0, last}}
	}
	three := []*heapStack{
		st(1, 10, fr("main.newCache", "main.(*a).reconcile", "main.run")),
		st(2, 30, fr("main.newCache", "main.(*b).reconcile", "main.run")),
		st(3, 20, fr("main.newCache", "main.(*c).reconcile", "main.run")),
	}
	if got, want := callPaths(three), []string{"main.(*b).reconcile", "main.(*c).reconcile", "main.(*a).reconcile"}; !slices.Equal(got, want) {
		t.Errorf("three callers: %v, want %v", got, want)
	}
	a, b := fr("main.put", "main.handle"), fr("main.put", "main.handle")
	b[1].Line = 99
	if got, want := callPaths([]*heapStack{st(1, 5, a), st(2, 5, b)}), []string{"main.handle:11", "main.handle:99"}; !slices.Equal(got, want) {
		t.Errorf("two lines of one caller: %v, want %v", got, want)
	}
	// Two stacks through one caller part further up: each is named by
	// the frame where it leaves the other.
	deep := []*heapStack{
		st(1, 30, fr("main.put", "main.a", "main.run")),
		st(2, 20, fr("main.put", "main.a", "main.other")),
		st(3, 10, fr("main.put", "main.b", "main.run")),
	}
	if got, want := callPaths(deep), []string{"main.run", "main.other", "main.b"}; !slices.Equal(got, want) {
		t.Errorf("two stacks through one caller: %v, want %v", got, want)
	}
	// Two lines of one caller beside another caller: both lines named,
	// whichever sibling comes first.
	x, y := fr("main.put", "main.svc", "main.run"), fr("main.put", "main.svc", "main.run")
	y[1].Line = 77
	tie := []*heapStack{st(1, 30, x), st(2, 20, fr("main.put", "main.dep", "main.run")), st(3, 10, y)}
	if got, want := callPaths(tie), []string{"main.svc:11", "main.dep", "main.svc:77"}; !slices.Equal(got, want) {
		t.Errorf("two lines of one caller beside another: %v, want %v", got, want)
	}
	if got := callPaths(three[:1]); got != nil {
		t.Errorf("one stack: %v, want none", got)
	}
}
