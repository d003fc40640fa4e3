package analysis_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/schema"
)

// tickerFunc is a function as a capture kept it: lines 20–27 of its file.
const tickerFunc = `func poll(ch chan int) {
	t := time.NewTicker(time.Second)
	for {
		// wait for the next tick
		<-t.C
		ch <- 1
	}
}`

// sourceBundle writes a bundle with one growing group parked at main.poll
// line `line`, and, when keep, the source_code row a capture writes.
func sourceBundle(t *testing.T, mem memory.Allocator, file string, line int, keep bool) *analysis.Report {
	t.Helper()
	s := newSynth(t, mem)
	st := s.stack("runtime.gopark", "proc.go", 1, "runtime.chanrecv1", "chan.go", 2, "main.poll", file, line, "runtime.goexit", "asm.s", 3)
	for snap := 0; snap < 5; snap++ {
		for i := 0; i < 10*(snap+1); i++ {
			s.add(schemaG(ts(snap), int64(100+i), "chan receive", st, "main.start", 0))
		}
	}
	if keep {
		s.add(schema.SourceCode{File: file, Function: "main.poll", StartLine: 20, EndLine: 27, Text: tickerFunc, FileSHA256: "abc", Status: schema.SourceOK, Source: "capture"})
	}
	rep, err := analysis.Analyze(s.open(), mem, analysis.Options{Rules: analysis.DefaultRules()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Suspects) != 1 {
		t.Fatalf("%d suspects", len(rep.Suspects))
	}
	return rep
}

// TestSourceFromBundle: quotes and source-matching rules use only the
// source kept in the bundle. A line inside the function is quoted; one
// outside it, or on a comment, says the source changed since the build;
// without a kept source it is unavailable, even when a file with that
// path exists on this machine.
func TestSourceFromBundle(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	// A file on disk at the frame's path, with the same text: it must not
	// be read.
	file := filepath.Join(t.TempDir(), "main.go")
	os.WriteFile(file, []byte(strings.Repeat("\n", 19)+tickerFunc+"\n"), 0o644)

	rep := sourceBundle(t, mem, file, 24, true)
	g := rep.Suspects[0]
	if g.Source == nil || g.Source.Status != analysis.SourceOK || g.Pattern != "ticker-not-stopped" {
		t.Fatalf("kept source: %+v pattern %s", g.Source, g.Pattern)
	}
	var quoted string
	for _, l := range g.Source.Lines {
		if l.Line == 24 {
			quoted = strings.TrimSpace(l.Text)
		}
	}
	if quoted != "<-t.C" || g.Source.Lines[0].Line != 21 || g.Source.Lines[len(g.Source.Lines)-1].Line != 27 || g.Source.SHA256 != "abc" {
		t.Errorf("quote %+v", g.Source)
	}
	for line, why := range map[int]string{31: "outside main.poll", 23: "not code"} {
		q := sourceBundle(t, mem, file, line, true).Suspects[0].Source
		if q.Status != analysis.SourceChanged || !strings.Contains(q.Detail, why) || !strings.Contains(q.Detail, "changed since the build") {
			t.Errorf("line %d: %+v, want changed (%s)", line, q, why)
		}
	}
	none := sourceBundle(t, mem, file, 24, false).Suspects[0]
	if none.Source.Status != analysis.SourceUnavailable || none.Pattern == "ticker-not-stopped" {
		t.Errorf("no kept source: %+v, pattern %s (the file on disk was read?)", none.Source, none.Pattern)
	}
}
