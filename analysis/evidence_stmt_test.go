package analysis

import (
	"go/scanner"
	"go/token"
	"strings"
	"testing"

	"github.com/leakscope/leakscope/ingest/schema"
)

// keptStmt reads text as the kept source of main.f (its first line is
// line 1 of the file) and returns the statement at the line marked
// "// here" for a goroutine waiting in kind; nil for empty text.
func keptStmt(t testing.TB, text, kind string) *waitStmt {
	t.Helper()
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	line := markedLine(t, text)
	c := &sourceCode{funcs: map[[2]string]*funcSource{
		{"f.go", "main.f"}: {start: 1, end: len(lines), lines: lines, status: schema.SourceOK},
	}}
	return c.stmtAt(Frame{Function: "main.f", File: "f.go", Line: line}, kind)
}

// markedLine returns the line of text that carries the comment
// "// here", read with the Go scanner (so text that does not parse still
// has its marked line); 0 when none does.
func markedLine(t testing.TB, text string) int {
	t.Helper()
	fset := token.NewFileSet()
	file := fset.AddFile("f.go", -1, len(text))
	var sc scanner.Scanner
	sc.Init(file, []byte(text), nil, scanner.ScanComments)
	line := 0
	for {
		pos, tok, lit := sc.Scan()
		if tok == token.EOF {
			return line
		}
		if tok == token.COMMENT && lit == "// here" {
			line = fset.Position(pos).Line
		}
	}
}

// TestStmtCases: each case of the statement a goroutine waits at is
// classified from the syntax tree, and a timer anywhere else in the
// function does not make the statement a timer wait.
// stmtCase is a function's text, the wait kind of the goroutine at its
// marked line, and what [TestStmtCases] must read there.
type stmtCase struct {
	name, kind, text string
	want             []string // the statement's kind, then its cases' kinds
	timer            tri
}

var stmtCases = []stmtCase{
	{"time.After case", "select", `func f(ch chan int) {
	for {
		select { // here
		case <-ch:
		case <-time.After(5 * time.Microsecond):
		}
	}
}`, []string{"select", "channel", "timer"}, triYes},
	{"time.After elsewhere", "select", `func f(a, b chan int) {
	select { // here
	case <-a:
	case v := <-b:
		_ = v
	}
	<-time.After(time.Millisecond)
	t := time.NewTicker(time.Second)
	_ = t.C
}`, []string{"select", "channel", "channel"}, triNo},
	{"ticker and ctx", "select", `func f(ctx context.Context, d time.Duration) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select { // here
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}`, []string{"select", "done", "ticker"}, triYes},
	{"timer variable", "chan receive", `func f(d time.Duration) {
	var timeout = time.After(d)
	<-timeout // here
}`, []string{"receive", "timer"}, triYes},
	{"typed field", "chan receive", `func (s *server) f(t *time.Timer) {
	<-t.C // here
}`, []string{"receive", "timer"}, triYes},
	{"unresolved C", "chan receive", `func (s *server) f() {
	<-s.clock.C // here
}`, []string{"receive", "maybe-timer"}, triMaybe},
	{"stopped timer", "chan receive", `func (r *retrier) f() {
	if !r.timer.Stop() {
		<-r.timer.C // here
	}
	r.timer.Reset(r.backoff)
}`, []string{"receive", "stopped-timer"}, triNo},
	{"receive after reset", "chan receive", `func (r *retrier) f() {
	r.timer.Stop()
	r.timer.Reset(r.backoff)
	<-r.timer.C // here
}`, []string{"receive", "timer"}, triYes},
	{"signal", "chan receive", `func f() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	<-sigs // here
}`, []string{"receive", "signal"}, triNo},
	{"closure send", "chan send", `func f(out chan int) {
	go func() {
		out <- 1 // here
	}()
}`, []string{"send", "send"}, triNo},
	{"ticker range", "chan receive", `func f() {
	t := time.NewTicker(90 * time.Second)
	for range t.C { // here
	}
}`, []string{"range", "ticker"}, triYes},
}

func TestStmtCases(t *testing.T) {
	for _, c := range stmtCases {
		w := keptStmt(t, c.text, c.kind)
		got := []string{w.kind}
		for _, k := range w.cases {
			got = append(got, k.kind)
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") || w.timer() != c.timer {
			t.Errorf("%s: %v timer %d (why %q), want %v timer %d", c.name, got, w.timer(), w.why, c.want, c.timer)
		}
	}
}

// TestStmtUnknown: without the statement the finder says why, and a
// select is never taken to have no timer case.
func TestStmtUnknown(t *testing.T) {
	for name, c := range map[string]struct{ text, kind, why string }{
		"no select":    {"func f(ch chan int) {\n\t<-ch // here\n}", "select", "no select at the frame's line"},
		"default case": {"func f(ch chan int) {\n\tselect { // here\n\tcase <-ch:\n\tdefault:\n\t}\n}", "select", "default case"},
		"broken":       {"func f(ch chan int) {\n\tselect { // here\n\tcase <-ch\n}", "select", "does not parse"},
	} {
		w := keptStmt(t, c.text, c.kind)
		if w.kind != "" || !strings.Contains(w.why, c.why) || w.timer() != triMaybe {
			t.Errorf("%s: %+v, want unknown (%s)", name, w, c.why)
		}
	}
	var none *sourceCode
	if w := none.stmtAt(Frame{Function: "main.f", File: "f.go", Line: 3}, "select"); w.why != "source absent" || w.timer() != triMaybe {
		t.Errorf("no source: %+v", w)
	}
}

// TestAllocObject: the statement at an allocating line names what it
// allocates, and holder follows the variable into a map.
func TestAllocObject(t *testing.T) {
	text := `func f(m map[string][]byte, k string) {
	buf := make([]byte, 64) // here
	m[k] = buf
}`
	c := &sourceCode{funcs: map[[2]string]*funcSource{{"f.go", "main.f"}: {start: 10, end: 13, lines: strings.Split(text, "\n"), status: schema.SourceOK}}}
	f := Frame{Function: "main.f", File: "f.go", Line: 11}
	if got := c.allocObject(f); got != "slices made with make" {
		t.Errorf("object %q", got)
	}
	if line, kind := c.holder(f); line != 12 || kind != "map" {
		t.Errorf("holder %d %q", line, kind)
	}
	if got := c.allocObject(Frame{Function: "main.f", File: "f.go", Line: 12}); got != "map" {
		t.Errorf("map write: %q", got)
	}
}

// FuzzStmtAt: any kept text, at any line, gives a statement or a reason,
// never a panic.
func FuzzStmtAt(f *testing.F) {
	f.Add("func f(ch chan int) {\n\tselect { // here\n\tcase <-time.After(d):\n\t}\n}", 2, "select")
	f.Add("func (r *retrier) f() {\n\tif !r.timer.Stop() {\n\t\t<-r.timer.C\n\t}\n}", 3, "chan receive")
	f.Add("func f() { m[k] = &T{} }", 1, "")
	f.Add("func f( {", 1, "chan send")
	f.Fuzz(func(t *testing.T, text string, line int, kind string) {
		lines := strings.Split(text, "\n")
		c := &sourceCode{funcs: map[[2]string]*funcSource{{"f.go", "main.f"}: {start: 1, end: len(lines), lines: lines, status: schema.SourceOK}}}
		fr := Frame{Function: "main.f", File: "f.go", Line: line}
		w := c.stmtAt(fr, kind)
		if (w.kind == "") == (w.why == "") {
			t.Fatalf("statement %q with reason %q: want exactly one", w.kind, w.why)
		}
		w.facts()
		c.allocObject(fr)
		c.holder(fr)
	})
}
