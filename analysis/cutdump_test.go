package analysis_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// cutDumpBundle writes five whole dumps one minute apart in which a leak
// grows by 10 a minute, and a sixth that was cut short after 5 of its 60
// leaked goroutines, with that status.
func cutDumpBundle(t *testing.T, mem memory.Allocator, lastStatus string) *bundle.Bundle {
	s := newSynth(t, mem)
	leak := s.stack("runtime.gopark", "proc.go", 1, "runtime.chansend1", "chan.go", 2, "main.leak", "/src/main.go", 40, "runtime.goexit", "asm.s", 3)
	mainStack := s.stack("runtime.gopark", "proc.go", 1, "main.main", "/src/main.go", 10, "runtime.main", "proc.go", 7)
	for snap := 0; snap < 6; snap++ {
		at := ts(snap)
		s.add(schema.Goroutine{SnapshotTS: at, Goid: 1, State: "select", StackID: mainStack, Source: "d"})
		n := 10 * (snap + 1)
		status := bundle.StatusComplete
		if snap == 5 {
			n, status = 5, lastStatus
		}
		for i := 0; i < n; i++ {
			s.add(schema.Goroutine{SnapshotTS: at, Goid: int64(100 + i), State: "chan send", WaitMinutes: int64(snap - i/10),
				StackID: leak, CreatorGoid: 1, CreatorFunction: "main.main", Source: "d"})
		}
		a := bundle.Artifact{Name: fmt.Sprintf("dump-%d.txt", snap), Kind: bundle.SourceDump, Time: time.Unix(0, at), Status: status, Rows: int64(n + 1)}
		if status == bundle.StatusTruncated {
			a.Detail = "reply cut after 65536 bytes"
		}
		s.w.Update(func(m *bundle.Manifest) { m.Artifacts = append(m.Artifacts, a) })
	}
	return s.open()
}

// TestCutDumpLeftOut: a dump cut short (at the capture's size cap, by a
// capture's end, a cut file) beside whole ones is no snapshot: the leak's
// count, range and fit come from the whole dumps, and a warning names the
// cut one. Read as whole, the same dump would end the series at 5.
func TestCutDumpLeftOut(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	leak := func(rep *analysis.Report) *analysis.Suspect {
		for i, s := range rep.Suspects {
			if s.Location == "main.leak" {
				return &rep.Suspects[i]
			}
		}
		return nil
	}
	rep, err := analysis.Analyze(cutDumpBundle(t, mem, bundle.StatusTruncated), mem, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := leak(rep)
	if g == nil {
		t.Fatalf("no suspect at main.leak; warnings %q", rep.Warnings)
	}
	if g.Count != 50 || !g.CountAt.Equal(time.Unix(0, ts(4))) || len(g.Counts) != 5 || g.Fit.Monotone != 1 {
		t.Errorf("count %d at %v, %d points, fit %+v; want 50 at the fifth (last whole) dump on a rising line", g.Count, g.CountAt, len(g.Counts), g.Fit)
	}
	warned := false
	for _, w := range rep.Warnings {
		warned = warned || strings.Contains(w, "dump-5.txt") && strings.Contains(w, "cut short") && strings.Contains(w, "reply cut after 65536 bytes")
	}
	if !warned {
		t.Errorf("no warning names the cut dump: %q", rep.Warnings)
	}
	// The same rows read as a whole dump end the leak at 5 goroutines.
	rep, err = analysis.Analyze(cutDumpBundle(t, mem, bundle.StatusComplete), mem, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g := leak(rep); g != nil && g.Count != 5 {
		t.Errorf("as a whole dump: count %d, want 5 (the test's premise)", g.Count)
	}
}

// TestEveryDumpCut: when every dump was cut, they are all there is: they
// stay in, and the report says the counts are lower bounds.
func TestEveryDumpCut(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	s := newSynth(t, mem)
	leak := s.stack("runtime.gopark", "proc.go", 1, "runtime.chansend1", "chan.go", 2, "main.leak", "/src/main.go", 40, "runtime.goexit", "asm.s", 3)
	for i := 0; i < 30; i++ {
		s.add(schema.Goroutine{SnapshotTS: ts(0), Goid: int64(100 + i), State: "chan send", WaitMinutes: 90, StackID: leak, CreatorGoid: 1, CreatorFunction: "main.main", Source: "d"})
	}
	s.w.Update(func(m *bundle.Manifest) {
		m.Artifacts = append(m.Artifacts, bundle.Artifact{Name: "crash.log", Kind: bundle.SourceDump, Time: time.Unix(0, ts(0)), Status: bundle.StatusTruncated, Detail: "ends inside goroutine 130"})
	})
	rep, err := analysis.Analyze(s.open(), mem, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Bundle.GoroutineSnapshots != 1 {
		t.Errorf("%d goroutine snapshots, want the cut dump's 1", rep.Bundle.GoroutineSnapshots)
	}
	warned := false
	for _, w := range rep.Warnings {
		warned = warned || strings.Contains(w, "every dump was cut short") && strings.Contains(w, "crash.log") && strings.Contains(w, "lower bounds")
	}
	if !warned {
		t.Errorf("no lower-bound warning: %q", rep.Warnings)
	}
}
