package analysis_test

import (
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

func sec(s int) int64 { return t0.Add(time.Duration(s) * time.Second).UnixNano() }

// tracedService writes a bundle holding only a trace: goroutine 1 runs
// main.main and creates goroutine 2 (main.serve); goroutine 2 opens a
// region "handle" per request and creates a main.worker goroutine inside
// it. Worker goroutines of even requests end before their region ends;
// odd ones never end (they outlive their span). Request 3's region never
// ends. Two windows each carry goroutine 2, merged by goid.
func tracedService(t testing.TB, mem memory.Allocator) *bundle.Bundle {
	s := newSynth(t, mem)
	creatorMain := s.stack("main.main", "/src/main.go", 12, "runtime.main", "proc.go", 1)
	creatorServe := s.stack("main.serve", "/src/main.go", 25, "runtime.goexit", "asm.s", 1)
	parked := s.stack("runtime.gopark", "proc.go", 1, "runtime.chansend1", "chan.go", 2, "main.worker", "/src/main.go", 50, "runtime.goexit", "asm.s", 1)
	s.add(schema.TraceGoroutine{Goid: 1, StartFunction: "runtime.main", LastState: "waiting", LastReason: "select"})
	// Goroutine 2 in two windows: created in the first, ended in neither.
	s.add(schema.TraceGoroutine{Goid: 2, ParentGoid: 1, CreatedTS: sec(1), CreationStackID: creatorMain, StartFunction: "main.serve", LastState: "running"})
	s.add(schema.TraceGoroutine{Goid: 2, StartFunction: "main.serve", LastState: "waiting", LastReason: "network"})
	for r := 0; r < 8; r++ {
		start, end := sec(10+10*r), sec(15+10*r)
		if r == 3 {
			end = 0
		}
		s.add(schema.Span{ID: int64(100 + r), Kind: schema.SpanRegion, Name: "handle", Goid: 2, StartTS: start, EndTS: end})
		w := schema.TraceGoroutine{Goid: int64(1000 + r), ParentGoid: 2, CreatedTS: sec(11 + 10*r), CreationStackID: creatorServe, StartFunction: "main.worker"}
		if r%2 == 0 {
			w.EndedTS = sec(12 + 10*r)
			w.LastState = "notexist"
		} else {
			w.LastState, w.LastReason, w.LastStackID = "waiting", "chan send", parked
		}
		s.add(w)
	}
	s.add(schema.Span{ID: 7, Kind: schema.SpanTask, Name: "batch", Goid: 2, StartTS: sec(5)})
	return s.open()
}

func TestAncestryFromTrace(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	tree, err := analysis.Ancestry(tracedService(t, mem), mem)
	if err != nil {
		t.Fatal(err)
	}
	if tree.Goroutines != 10 || len(tree.Roots) != 1 {
		t.Fatalf("goroutines %d roots %d", tree.Goroutines, len(tree.Roots))
	}
	root := tree.Roots[0]
	if root.Function != "runtime.main" || len(root.Children) != 1 {
		t.Fatalf("root %+v", root)
	}
	serve := root.Children[0]
	if serve.Function != "main.serve" || serve.CreatedBy != "main.main" || serve.Count != 1 || len(serve.Children) != 1 {
		t.Fatalf("serve node %+v", serve)
	}
	w := serve.Children[0]
	if w.Function != "main.worker" || w.CreatedBy != "main.serve" || w.Count != 8 || w.Alive != 4 {
		t.Errorf("worker node %+v, want 8 workers of which 4 alive", w)
	}
	if got := tree.Chain(1003); len(got) != 2 || got[0] != 2 || got[1] != 1 {
		t.Errorf("chain of 1003 = %v, want [2 1]", got)
	}
}

func TestAnalyzeTraceOnly(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rep, err := analysis.Analyze(tracedService(t, mem), mem, analysis.Options{MinScore: -1})
	if err != nil {
		t.Fatal(err)
	}
	sp := rep.Spans
	if sp.Tasks != 1 || sp.Regions != 8 || len(sp.NeverEnded) != 2 {
		t.Errorf("spans %+v", sp)
	}
	// Workers of requests 1, 5, 7 outlive their ended region; request 3's
	// region never ended, so its worker does not count.
	if len(sp.Outliving) != 1 || sp.Outliving[0].Count != 3 || sp.Outliving[0].Span != "handle" || sp.Outliving[0].Function != "main.worker" {
		t.Errorf("outliving %+v", sp.Outliving)
	}
	var found bool
	for _, s := range rep.Suspects {
		if s.Location == "main.worker" && s.Creator == "main.serve" && s.State == "chan send" {
			found = true
		}
	}
	if !found {
		t.Errorf("no suspect at main.worker from the trace: %+v", rep.Suspects)
	}
}

func TestLifetimes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b := tracedService(t, mem)
	v, err := analysis.Lifetimes(b, mem, time.Time{}, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v.Total != 10+9 || len(v.Bars) != 19 || v.Omitted != 0 {
		t.Fatalf("total %d bars %d omitted %d", v.Total, len(v.Bars), v.Omitted)
	}
	var open int
	for i, bar := range v.Bars {
		if bar.End == nil {
			open++
		}
		if i > 0 && bar.Start.Before(v.Bars[i-1].Start) {
			t.Fatalf("bars not sorted by start")
		}
	}
	if open != 1+1+4+2 { // goroutines 1, 2, four workers; region 3 and the task
		t.Errorf("%d open bars", open)
	}
	v, err = analysis.Lifetimes(b, mem, time.Time{}, time.Time{}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Bars) != 5 || v.Omitted != 14 {
		t.Fatalf("limited: bars %d omitted %d", len(v.Bars), v.Omitted)
	}
	for _, bar := range v.Bars {
		if bar.End != nil {
			t.Errorf("downsampling dropped an open bar before a closed one: %+v", bar)
		}
	}
	v, err = analysis.Lifetimes(b, mem, t0.Add(30*time.Second), t0.Add(40*time.Second), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, bar := range v.Bars {
		if bar.Start.After(t0.Add(40*time.Second)) || bar.End != nil && bar.End.Before(t0.Add(30*time.Second)) {
			t.Errorf("bar %+v outside the range", bar)
		}
	}
}

func TestAncestryMergesEBPF(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	s := newSynth(t, mem)
	st := s.stack("main.worker", "/src/w.go", 5, "runtime.goexit", "asm.s", 1)
	// Goroutine 50 is in a dump (created by 7); 7 is known only to eBPF,
	// created by 1; 60 was created and exited, seen only by eBPF.
	s.add(schema.Goroutine{SnapshotTS: sec(10), Goid: 50, State: "select", StackID: st, CreatorGoid: 7, CreatorFunction: "main.spawn", Source: "d"})
	s.add(schema.EBPFEvent{TS: sec(1), MonoNS: 1, Kind: schema.EventGoCreate, PID: 9, TID: 9, Goid: 7, ParentGoid: 1})
	s.add(schema.EBPFEvent{TS: sec(2), MonoNS: 2, Kind: schema.EventGoCreate, PID: 9, TID: 9, Goid: 60, ParentGoid: 7})
	s.add(schema.EBPFEvent{TS: sec(3), MonoNS: 3, Kind: schema.EventGoExit, PID: 9, TID: 9, Goid: 60})
	b := s.open()
	tree, err := analysis.Ancestry(b, mem)
	if err != nil {
		t.Fatal(err)
	}
	if got := tree.Chain(50); len(got) != 2 || got[0] != 7 || got[1] != 1 {
		t.Errorf("chain of 50 = %v, want [7 1]", got)
	}
	if tree.Goroutines != 3 || len(tree.Sources) != 2 || tree.Sources[1] != "ebpf_events" {
		t.Errorf("tree: %d goroutines, sources %v", tree.Goroutines, tree.Sources)
	}
	v, err := analysis.Lifetimes(b, mem, time.Time{}, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, bar := range v.Bars {
		if bar.Goid == 60 && (bar.End == nil || !bar.End.Equal(time.Unix(0, sec(3)).UTC()) || bar.Parent != 7) {
			t.Errorf("eBPF goroutine bar %+v", bar)
		}
	}
}
