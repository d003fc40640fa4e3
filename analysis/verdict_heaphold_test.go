package analysis

import (
	"strings"
	"testing"

	"github.com/leakscope/leakscope/ingest/schema"
)

// TestHeldSeries: a site is held only when more than one snapshot shows
// it and its last bytes stand for two heap samples or more.
func TestHeldSeries(t *testing.T) {
	const w = 512 << 10 // one sample of runtime.malg's goroutine stacks at the default rate
	for _, c := range []struct {
		name  string
		bytes []float64
		want  bool
	}{
		{"one sample in the last snapshot", []float64{0, 0, w}, false},
		{"one sample seen twice", []float64{0, w, w}, false},
		{"two samples in one snapshot", []float64{0, 0, 2 * w}, false},
		{"two samples, two snapshots", []float64{0, w, 2 * w}, true},
		{"steady growth", []float64{w, 2 * w, 3 * w, 4 * w}, true},
	} {
		if got := held(c.bytes, w); got != c.want {
			t.Errorf("%s: held(%v) = %v, want %v", c.name, c.bytes, got, c.want)
		}
	}
}

// TestHandedToGoroutine: a creator's allocation is the goroutines' when
// the go statement passes or captures what the line assigns, or the line
// is the go statement; not when the creator keeps it (a package-level
// slice, a local no go statement mentions); not without source.
func TestHandedToGoroutine(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       bool
	}{
		{"channel captured", `func f() {
	ch := make(chan int) // here
	go func() { ch <- 1 }()
}`, true},
		{"buffer passed", `func f(n int) {
	var buf = make([]byte, n) // here
	go work(buf)
}`, true},
		{"field of the receiver", `func (s *server) f() {
	s.queue = make(chan job, 8) // here
	go s.loop()
}`, true},
		{"the go statement itself", `func f(n int) {
	go func(b []byte) { // here
		_ = b
	}(make([]byte, n))
}`, true},
		{"package-level slice", `func f(w http.ResponseWriter) {
	history = append(history, make([]byte, 4096)) // here
	result := make(chan int)
	go func() { result <- 1 }()
}`, false},
		{"local kept by the creator", `func f() {
	data := make([]byte, 4096) // here
	history = append(history, data)
	go leak()
}`, false},
	} {
		lines := strings.Split(c.text, "\n")
		src := &sourceCode{funcs: map[[2]string]*funcSource{
			{"f.go", "main.f"}: {start: 1, end: len(lines), lines: lines, status: schema.SourceOK},
		}}
		f := Frame{Function: "main.f", File: "f.go", Line: markedLine(t, c.text)}
		if got := src.handedToGoroutine(f); got != c.want {
			t.Errorf("%s: handedToGoroutine = %v, want %v", c.name, got, c.want)
		}
		if (&sourceCode{funcs: map[[2]string]*funcSource{}}).handedToGoroutine(f) {
			t.Errorf("%s: handed to a goroutine with no source kept", c.name)
		}
	}
}
