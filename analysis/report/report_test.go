package report_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/dev/golden"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/report"
	"github.com/leakscope/leakscope/dev/bundletest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// leakBundle writes a bundle with one goroutine leak (main.leak, created
// by main.handle, 20 more per minute) beside a stable pool, and one
// growing heap site, over five one-minute snapshots.
func leakBundle(t *testing.T, mem memory.Allocator) *bundle.Bundle {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "r.lsb")
	m := bundle.NewManifest("golden", "test")
	m.Start, m.End = t0, t0.Add(4*time.Minute)
	m.Target.ModulePath = "example.com/svc"
	m.Source(bundle.SourceDump)
	w := bundletest.New(t, dir, m, mem)
	sid := w.Stack
	leak := sid(bundle.StackFrame{Function: "runtime.gopark", File: "proc.go", Line: 1}, bundle.StackFrame{Function: "runtime.chansend1", File: "chan.go", Line: 2},
		bundle.StackFrame{Function: "main.leak", File: "/nonexistent/main.go", Line: 40}, bundle.StackFrame{Function: "runtime.goexit", File: "asm.s", Line: 3})
	pool := sid(bundle.StackFrame{Function: "runtime.gopark", File: "proc.go", Line: 1}, bundle.StackFrame{Function: "main.worker", File: "/nonexistent/main.go", Line: 60})
	creator := sid(bundle.StackFrame{Function: "main.handle", File: "/nonexistent/main.go", Line: 33})
	cache := sid(bundle.StackFrame{Function: "main.(*cache).put", File: "/nonexistent/cache.go", Line: 17}, bundle.StackFrame{Function: "main.main", File: "/nonexistent/main.go", Line: 9})
	// main serves (in IO wait) and owns the pool: a process whose only
	// goroutines were parked would be stuck as a whole.
	serve := sid(bundle.StackFrame{Function: "runtime.gopark", File: "proc.go", Line: 1}, bundle.StackFrame{Function: "internal/poll.runtime_pollWait", File: "netpoll.go", Line: 4},
		bundle.StackFrame{Function: "main.main", File: "/nonexistent/main.go", Line: 12})
	for s := 0; s < 5; s++ {
		at := t0.Add(time.Duration(s) * time.Minute).UnixNano()
		for i := 0; i < 20*(s+1); i++ {
			w.Add(schema.Goroutine{SnapshotTS: at, Goid: int64(100 + i), State: "chan send", StackID: leak, CreatorGoid: 1, CreatorFunction: "main.handle", CreatorStackID: creator, Source: "d"})
		}
		w.Add(schema.Goroutine{SnapshotTS: at, Goid: 1, State: "IO wait", StackID: serve, Source: "d"})
		for i := 0; i < 8; i++ {
			w.Add(schema.Goroutine{SnapshotTS: at, Goid: int64(10 + i), State: "chan receive", StackID: pool, CreatorGoid: 1, CreatorFunction: "main.main", Source: "d"})
		}
		row := schema.Sample{SnapshotTS: at, Profile: schema.ProfileHeap, StackID: cache, Source: "h"}
		row.Set(schema.ColInuseSpace, int64(s+1)<<22)
		row.Set(schema.ColInuseObjects, int64(s+1)*64)
		w.Add(row)
		w.Add(schema.Metric{TS: at, Name: schema.MetricHeapLive, Value: float64(s+5) * 1e6, Source: "m"})
	}
	return w.Open()
}

func TestRender(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b := leakBundle(t, mem)
	rep, err := analysis.Analyze(b, mem, analysis.Options{Rules: analysis.DefaultRules()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Suspects) != 2 {
		t.Fatalf("%d suspects", len(rep.Suspects))
	}
	for _, c := range []struct {
		name       string
		postmortem bool
		html       bool
		want       []string
	}{
		{"report.md", false, false, []string{"# Leak report: example.com/svc", "| 1 | ", "chan-send-no-receiver", "main.leak", "**Usual fix:**", "| series | over time |", "## Timeline"}},
		{"postmortem.md", true, false, []string{"# Postmortem: goroutine and heap leak in example.com/svc", "## Summary", "## Impact", "## Timeline", "## Root-cause candidates", "## Remediation", "## Follow-ups", "100 goroutines created from `main.handle` leak, +20.0/min"}},
		{"report.html", false, true, []string{"<!DOCTYPE html>", "<style>", "<svg", "<code>main.leak</code>", `<td><a href="#g1">G1</a></td>`, `<div class="table"><table>`}},
		{"postmortem.html", true, true, []string{"<h2>Summary</h2>", "<h2>Remediation</h2>", "Flame graph"}},
	} {
		var buf bytes.Buffer
		opts := report.Options{Postmortem: c.postmortem, Bundle: b, Mem: mem}
		if c.html {
			err = report.HTML(&buf, rep, opts)
		} else {
			err = report.Markdown(&buf, rep, opts)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out := buf.String()
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q", c.name, w)
			}
		}
		if c.html && (strings.Contains(out, "<script") || strings.Contains(out, "http://") && !strings.Contains(out, "http://www.w3.org/2000/svg")) {
			t.Errorf("%s is not self-contained", c.name)
		}
		golden.Check(t, c.name, buf.Bytes())
	}
}

func TestJSON(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rep, err := analysis.Analyze(leakBundle(t, mem), mem, analysis.Options{Rules: analysis.DefaultRules()})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := report.JSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.json", buf.Bytes())
	var back analysis.Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Suspects) != 2 || back.Suspects[0].Location != rep.Suspects[0].Location || !back.Suspects[0].FirstSeen.Equal(rep.Suspects[0].FirstSeen) {
		t.Errorf("JSON round trip lost data: %+v", back.Suspects)
	}
}

func TestRenderEmpty(t *testing.T) {
	rep := &analysis.Report{}
	for _, pm := range []bool{false, true} {
		var md, h bytes.Buffer
		if err := report.Markdown(&md, rep, report.Options{Postmortem: pm}); err != nil {
			t.Fatal(err)
		}
		if err := report.HTML(&h, rep, report.Options{Postmortem: pm}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(md.String(), "no leak") && !strings.Contains(md.String(), "No leak suspects") {
			t.Errorf("empty report says nothing about the absence of leaks:\n%s", md.String())
		}
	}
}

// TestTitleNamesTheProgram: a report's title names the program, as the
// fleet names its service, not the module it was built from (the demo's
// sample lives in leakscope's own module: "leak in
// github.com/leakscope/leakscope" read as if the tool leaked).
func TestTitleNamesTheProgram(t *testing.T) {
	rep := &analysis.Report{Bundle: analysis.BundleSummary{Exe: "/tmp/build/operator-sim", Module: "github.com/leakscope/leakscope"}}
	for _, pm := range []bool{false, true} {
		var md bytes.Buffer
		if err := report.Markdown(&md, rep, report.Options{Postmortem: pm}); err != nil {
			t.Fatal(err)
		}
		title, _, _ := strings.Cut(md.String(), "\n")
		if !strings.HasSuffix(title, " operator-sim") || strings.Contains(title, "github.com") {
			t.Errorf("title %q: want it to name the program, operator-sim", title)
		}
	}
}
