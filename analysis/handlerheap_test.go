package analysis_test

import (
	"context"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/samples"
)

var handlerHeapProg = &testProg{name: "handlerheap"}

// TestHandlerHeapOwnSuspect captures testdata/handlerheap, whose handler
// both appends 4 KiB per request to a package-level slice and leaks a
// goroutine per request, and checks that the slice's site is a heap
// suspect of its own, credited to no goroutine group nor to its
// incident: the leaked goroutines hold their channel, not the handler's
// slice.
func TestHandlerHeapOwnSuspect(t *testing.T) {
	liveTest(t, "builds and runs a Go program")
	bin := handlerHeapProg.build(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := samples.StartBinary(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	_, rep := captureReport(t, ctx, p, "handlerheap.lsb")
	appendLine := commentLine(t, "testdata/handlerheap/main.go", "// grows on its own")
	var g, h *analysis.Suspect
	for i, s := range rep.Suspects {
		t.Logf("%s %s %s at %s:%d: %s, %s; retained %d", s.ID, s.Kind, s.Pattern, s.Location, s.Line, s.Display.Count, s.Display.Rate, s.RetainedBytes)
		switch {
		case s.Kind == analysis.KindGoroutine && strings.HasPrefix(s.Location, "main.handle.func"):
			g = &rep.Suspects[i]
		case s.Kind == analysis.KindHeap && s.Location == "main.handle" && s.Line == appendLine:
			h = &rep.Suspects[i]
		}
	}
	if g == nil {
		t.Fatal("no goroutine suspect for the goroutine main.handle leaks")
	}
	if h == nil {
		t.Fatalf("no heap suspect at main.handle:%d, the slice the handler appends to", appendLine)
	}
	// 4 KiB a request at 50 requests a second: the site holds at least
	// one request's buffer per snapshot interval it was seen growing.
	if h.Count < 4096*int64(h.Range.Points-1) {
		t.Errorf("heap suspect holds %d B over %d snapshots, less than one 4 KiB buffer per snapshot", h.Count, h.Range.Points)
	}
	// Two bugs of one function, two incidents: the goroutines' incident
	// is not credited with the slice they do not hold.
	if h.Incident == "" || h.Incident == g.Incident {
		t.Errorf("heap suspect %s is in incident %q with goroutine suspect %s (%q)", h.ID, h.Incident, g.ID, g.Incident)
	}
	for _, gr := range rep.Heap.Growers {
		if gr.Location == "main.handle" && gr.Line == appendLine && gr.Suspect != "" {
			t.Errorf("the handler's slice (%s:%d) is credited to goroutine suspect %s", gr.File, gr.Line, gr.Suspect)
		}
	}
	for _, e := range g.Evidence {
		if e.Kind == "heap" && strings.Contains(e.Detail, fmt.Sprintf(":%d)", appendLine)) {
			t.Errorf("goroutine suspect %s names the handler's slice as its heap: %s", g.ID, e.Detail)
		}
	}
}

// commentLine is the 1-based line of file that carries the comment
// text, read with the Go scanner.
func commentLine(t *testing.T, file, text string) int {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f := fset.AddFile(file, -1, len(src))
	var sc scanner.Scanner
	sc.Init(f, src, nil, scanner.ScanComments)
	for {
		pos, tok, lit := sc.Scan()
		if tok == token.EOF {
			t.Fatalf("no comment %q in %s", text, file)
			return 0
		}
		if tok == token.COMMENT && lit == text {
			return fset.Position(pos).Line
		}
	}
}
