package analysis_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/dump"
	"github.com/leakscope/leakscope/ingest/gotrace"
	"github.com/leakscope/leakscope/samples"
)

// TestRealTraceAndDumps records ticker-leak for real: a dump, a 4 s
// execution trace, then a second dump, all ingested into one bundle, and
// checks what the trace adds: creation links for the ancestry tree,
// goroutine and region lifetimes, and trace evidence on the suspect.
func TestRealTraceAndDumps(t *testing.T) {
	liveTest(t, "runs a sample program for a few seconds")
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	b := recordTickerLeak(t, root)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	checkTickerAncestry(t, b, mem)
	checkTickerLifetimes(t, b, mem)
	rep, err := analysis.Analyze(b, mem, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Suspects) == 0 || rep.Suspects[0].Location != "main.(*StatusPoller).poll" {
		t.Fatalf("suspects %+v", rep.Suspects)
	}
	s := rep.Suspects[0]
	var traceEv bool
	for _, e := range s.Evidence {
		traceEv = traceEv || e.Kind == "trace"
	}
	if !traceEv || len(s.Ancestry) < 2 || rep.Spans.Regions == 0 {
		t.Errorf("suspect %s: evidence %+v ancestry %v regions %d", s.ID, s.Evidence, s.Ancestry, rep.Spans.Regions)
	}
	// (A 4 s window may hold no GC cycle, so only the heap is checked.)
	if len(rep.Series.HeapLive) < 10 {
		t.Errorf("trace heap metric missing from the series: %d points", len(rep.Series.HeapLive))
	}
}

// recordTickerLeak runs the ticker-leak sample and records a dump, a 4 s
// trace and another dump into a bundle.
func recordTickerLeak(t *testing.T, root string) *bundle.Bundle {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := samples.Start(ctx, filepath.Join(root, "ticker-leak"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	get := func(path string) []byte { return httpGet(t, p.URL+path) }
	dir := filepath.Join(t.TempDir(), "t.lsb")
	w, err := bundle.Create(dir, bundle.NewManifest("trace-int", "test"), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	addDump := func(name string) {
		at := time.Now()
		a := bundle.Artifact{Name: name, Time: at}
		if err := dump.Ingest(w, bytes.NewReader(get("/debug/pprof/goroutine?debug=2")), &a); err != nil {
			t.Fatal(err)
		}
		w.Update(func(m *bundle.Manifest) { m.Widen(at); m.Source(bundle.SourceDump) })
	}
	time.Sleep(time.Second)
	addDump("d1")
	tr := get("/debug/pprof/trace?seconds=4")
	a := bundle.Artifact{Name: "trace", Time: time.Now()}
	if err := gotrace.Ingest(w, bytes.NewReader(tr), &a, gotrace.Options{Now: a.Time}); err != nil {
		t.Fatal(err)
	}
	w.Update(func(m *bundle.Manifest) { m.Widen(a.Time); m.Source(bundle.SourceTrace) })
	addDump("d2")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkTickerAncestry: the pollers hang under their creator, from the
// dumps and the trace together.
func checkTickerAncestry(t *testing.T, b *bundle.Bundle, mem memory.Allocator) {
	t.Helper()
	tree, err := analysis.Ancestry(b, mem)
	if err != nil {
		t.Fatal(err)
	}
	var poll *analysis.AncestryNode
	var walk func(ns []*analysis.AncestryNode)
	walk = func(ns []*analysis.AncestryNode) {
		for _, n := range ns {
			if n.Function == "main.(*StatusPoller).poll" && (poll == nil || n.Count > poll.Count) {
				poll = n
			}
			walk(n.Children)
		}
	}
	walk(tree.Roots)
	if poll == nil || poll.CreatedBy != "main.(*StatusPoller).Track" || poll.Alive < 20 {
		t.Fatalf("ancestry: poll node %+v (sources %v)", poll, tree.Sources)
	}
	if strings.Join(tree.Sources, ",") != "goroutines,trace_goroutines" {
		t.Errorf("ancestry sources %v", tree.Sources)
	}
}

// checkTickerLifetimes: the timeline holds the trace's regions and
// goroutines that ended.
func checkTickerLifetimes(t *testing.T, b *bundle.Bundle, mem memory.Allocator) {
	t.Helper()
	v, err := analysis.Lifetimes(b, mem, time.Time{}, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var regions, ended int
	for _, bar := range v.Bars {
		if bar.Kind == "region" && bar.Name == "fetch-status" {
			regions++
		}
		if bar.Kind == "goroutine" && bar.End != nil {
			ended++
		}
	}
	if regions == 0 || ended == 0 {
		t.Errorf("lifetimes: %d fetch-status regions, %d ended goroutines of %d bars", regions, ended, len(v.Bars))
	}
}
