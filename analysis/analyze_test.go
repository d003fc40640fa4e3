package analysis_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/leakscope/leakscope/ingest/schema"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
)

func TestAnalyzeFindsPlantedLeak(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b := leakyService(t, mem)
	rep, err := analysis.Analyze(b, mem, analysis.Options{Rules: analysis.DefaultRules()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Suspects) != 2 {
		for _, s := range rep.Suspects {
			t.Logf("%s %s %s %.1f", s.ID, s.Pattern, s.Location, s.Score)
		}
		t.Fatalf("got %d suspects, want 2 (the goroutine leak and the growing cache)", len(rep.Suspects))
	}
	g, h := rep.Suspects[0], rep.Suspects[1]
	if g.Kind != analysis.KindGoroutine {
		g, h = h, g
	}
	if g.ID != "G1" || g.Kind != analysis.KindGoroutine || g.Location != "main.leak" || g.Creator != "main.handle" ||
		g.Pattern != "chan-send-no-receiver" || g.Count != 60 || g.Line != 40 || g.CreatorLine != 33 {
		t.Errorf("first suspect = %+v", g)
	}
	if g.GrowthPerMin < 9.9 || g.GrowthPerMin > 10.1 || g.Fit.R2 < 0.99 || g.Fit.Monotone != 1 {
		t.Errorf("growth %.2f/min fit %+v, want 10/min on a perfect line", g.GrowthPerMin, g.Fit)
	}
	// Real hops: main.handle ran the go statement in goroutine 5, a
	// main.serve goroutine, which main.main created.
	if want := []string{"main.handle", "main.serve", "main.main"}; strings.Join(g.Ancestry, ",") != strings.Join(want, ",") {
		t.Errorf("ancestry %v, want %v", g.Ancestry, want)
	}
	if o := g.Origin; o == nil || o.Function != "main.handle" || o.Line != 33 || o.Basis != "dump" || o.Goid != 5 {
		t.Errorf("origin %+v, want main.handle:33 in goroutine 5 from the dump", o)
	}
	if len(g.CreationChain) < 2 || g.CreationChain[0].Goid != 5 || g.CreationChain[0].Function != "main.serve" || g.CreationChain[1].Goid != 1 {
		t.Errorf("creation chain %+v", g.CreationChain)
	}
	if g.RetainedBytes != 12<<20 {
		t.Errorf("retained %d, want the leak's own 12 MiB", g.RetainedBytes)
	}
	if !g.FirstSeen.Equal(t0) || len(g.Counts) != 6 || g.Counts[5].Value != 60 {
		t.Errorf("first seen %v counts %v", g.FirstSeen, g.Counts)
	}
	if len(g.Goids) == 0 || len(g.Goids) > 20 {
		t.Errorf("goid sample %v", g.Goids)
	}
	if h.ID != "H1" || h.Kind != analysis.KindHeap || h.Location != "main.(*cache).put" || h.Count != 24<<20 || h.Pattern != "heap-growth" {
		t.Errorf("second suspect = %+v", h)
	}
	if got := rep.Series.Suspects["G1"]; len(got) != 6 {
		t.Errorf("series of G1: %v", got)
	}
	if len(rep.Series.Goroutines) != 6 || rep.Series.Goroutines[0].Value != 1+1+10+50+20 {
		t.Errorf("goroutine series %v", rep.Series.Goroutines)
	}
	if rep.Bundle.GoroutineSnapshots != 6 || rep.Bundle.HeapSnapshots != 6 || rep.Bundle.PeakGoroutines != 1+1+60+50+40 {
		t.Errorf("bundle summary %+v", rep.Bundle)
	}
	if rep.Heap.AttributedBytes != 10<<20 || len(rep.Heap.Growers) != 3 {
		t.Errorf("heap: attributed %d growers %d", rep.Heap.AttributedBytes, len(rep.Heap.Growers))
	}
	var attributed bool
	for _, gr := range rep.Heap.Growers {
		if gr.Location == "main.leak" {
			attributed = gr.Suspect == "G1"
		}
	}
	if !attributed {
		t.Error("the leak's own allocations are not attributed to G1")
	}
	if len(rep.Timeline) < 4 {
		t.Errorf("timeline %v", rep.Timeline)
	}
	for i := 1; i < len(rep.Timeline); i++ {
		if rep.Timeline[i].TS.Before(rep.Timeline[i-1].TS) {
			t.Fatalf("timeline out of order at %d: %v", i, rep.Timeline)
		}
	}
}

func TestAnalyzeJSONContract(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rep, err := analysis.Analyze(leakyService(t, mem), mem, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"bundle", "suspects", "timeline"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("report JSON lacks %q", k)
		}
	}
	s := doc["suspects"].([]any)[0].(map[string]any)
	for _, k := range []string{"id", "kind", "pattern", "location", "file", "line", "creator", "ancestry", "count", "growth_per_min", "first_seen", "score", "evidence"} {
		if _, ok := s[k]; !ok {
			t.Errorf("suspect JSON lacks %q", k)
		}
	}
	ev := doc["timeline"].([]any)[0].(map[string]any)
	for _, k := range []string{"ts", "event"} {
		if _, ok := ev[k]; !ok {
			t.Errorf("timeline JSON lacks %q", k)
		}
	}
}

func TestAnalyzeHealthyService(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	s := newSynth(t, mem)
	pool := s.stack("runtime.gopark", "p.go", 1, "runtime.chanrecv1", "c.go", 2, "main.worker", "/src/w.go", 9)
	// main serves in IO wait: a process whose only goroutines were the
	// parked pool would be stuck as a whole.
	serve := s.stack("runtime.gopark", "p.go", 1, "internal/poll.runtime_pollWait", "n.go", 3, "main.main", "/src/m.go", 12)
	for snap := 0; snap < 8; snap++ {
		s.add(schema.Goroutine{SnapshotTS: ts(snap), Goid: 1, State: "IO wait", StackID: serve, Source: "d"})
		for i := 0; i < 500; i++ {
			s.add(schemaG(ts(snap), int64(10+i), "chan receive", pool, "main.start", int64(snap)))
		}
	}
	rep, err := analysis.Analyze(s.open(), mem, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Suspects) != 0 {
		t.Errorf("a stable pool produced suspects: %+v", rep.Suspects)
	}
}

// TestAnalyzeGroupGoneAtLastSnapshot: a group that grew in chan send for
// five snapshots and has no goroutine left at the sixth drained: it is
// neither stuck nor leaking, so it is no suspect (it once read "0
// goroutines ... are stuck"), while a group still growing beside it is.
func TestAnalyzeGroupGoneAtLastSnapshot(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	s := newSynth(t, mem)
	serve := s.stack("runtime.gopark", "p.go", 1, "internal/poll.runtime_pollWait", "n.go", 3, "main.main", "/src/m.go", 12)
	drained := s.stack("runtime.gopark", "p.go", 1, "runtime.chansend1", "c.go", 2, "main.flush", "/src/f.go", 30)
	leak := s.stack("runtime.gopark", "p.go", 1, "runtime.chansend1", "c.go", 2, "main.leak", "/src/l.go", 40)
	for snap := 0; snap < 6; snap++ {
		s.add(schema.Goroutine{SnapshotTS: ts(snap), Goid: 1, State: "IO wait", StackID: serve, Source: "d"})
		for i := 0; i < 20*(snap+1); i++ {
			s.add(schemaG(ts(snap), int64(1000+i), "chan send", leak, "main.handle", int64(snap-i/20)))
			if snap < 5 {
				s.add(schemaG(ts(snap), int64(5000+i), "chan send", drained, "main.batch", int64(snap-i/20)))
			}
		}
	}
	rep, err := analysis.Analyze(s.open(), mem, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sawLeak bool
	for _, sus := range rep.Suspects {
		switch sus.Location {
		case "main.flush":
			t.Errorf("drained group is a suspect: %s %s, %d goroutines at the last snapshot", sus.Verdict, sus.Pattern, sus.Count)
		case "main.leak":
			sawLeak = true
		}
	}
	if !sawLeak {
		t.Errorf("the growing group is no suspect: %+v", rep.Suspects)
	}
	for _, inc := range rep.Incidents {
		if inc.Goroutines == 0 && len(inc.Suspects) > 0 && !strings.HasPrefix(inc.Suspects[0], "H") {
			t.Errorf("incident %s names no goroutine: %s", inc.ID, inc.Summary)
		}
	}
}

func TestAnalyzeEmptyBundle(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rep, err := analysis.Analyze(newSynth(t, mem).open(), mem, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Suspects) != 0 || rep.Suspects == nil || rep.Timeline == nil {
		t.Errorf("empty bundle: suspects %v timeline %v", rep.Suspects, rep.Timeline)
	}
}

func TestAnalyzeLongWaitWithoutGrowth(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	s := newSynth(t, mem)
	st := s.stack("runtime.gopark", "p.go", 1, "sync.runtime_SemacquireWaitGroup", "s.go", 2, "sync.(*WaitGroup).Wait", "wg.go", 3, "main.syncAll", "/src/s.go", 70)
	for i := 0; i < 5000; i++ {
		s.add(schemaG(ts(0), int64(10+i), "sync.WaitGroup.Wait", st, "main.dispatch", 45))
	}
	rep, err := analysis.Analyze(s.open(), mem, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Suspects) != 1 || rep.Suspects[0].Pattern != "waitgroup-never-done" || rep.Suspects[0].MaxWaitMinutes != 45 {
		t.Fatalf("suspects %+v", rep.Suspects)
	}
	if len(rep.Warnings) == 0 {
		t.Error("no warning about a single snapshot")
	}
}

func TestGoroutineLeakProfileCrossCheck(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	s := newSynth(t, mem)
	leak := s.stack("main.leak", "/src/main.go", 40)
	other := s.stack("main.other", "/src/main.go", 90)
	onlyProfile := s.stack("runtime.gopark", "proc.go", 1, "main.forgotten", "/src/f.go", 7)
	for snap := 0; snap < 4; snap++ {
		for i := 0; i < 10*(snap+1); i++ {
			s.add(schemaG(ts(snap), int64(100+i), "chan send", leak, "main.handle", 0))
			s.add(schemaG(ts(snap), int64(1000+i), "select", other, "main.start", 0))
		}
	}
	for _, r := range []struct {
		stack, n int64
	}{{leak, 40}, {onlyProfile, 3}} {
		row := schema.Sample{SnapshotTS: ts(3), Profile: schema.ProfileGoroutineLeak, StackID: r.stack, Source: "p"}
		row.Set(schema.ColCount, r.n)
		s.add(row)
	}
	rep, err := analysis.Analyze(s.open(), mem, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.LeakProfile
	if c == nil || c.Leaked != 43 || len(c.Agree) != 1 || len(c.OnlyAnalysis) != 1 || len(c.OnlyProfile) != 1 || !strings.Contains(c.OnlyProfile[0], "main.forgotten") {
		t.Fatalf("cross-check %+v", c)
	}
	for _, su := range rep.Suspects {
		if (su.Location == "main.leak") != (su.LeakProfile == "confirmed") {
			t.Errorf("suspect %s at %s: goroutineleak %q", su.ID, su.Location, su.LeakProfile)
		}
	}
}

func TestAnalyzeGoroutineProfileOnly(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	s := newSynth(t, mem)
	leak := s.stack("runtime.gopark", "proc.go", 1, "runtime.selectgo", "select.go", 2, "main.wait", "/src/w.go", 30, "runtime.goexit", "asm.s", 1)
	idle := s.stack("runtime.gopark", "proc.go", 1, "runtime.chanrecv1", "chan.go", 2, "main.worker", "/src/w.go", 50, "runtime.goexit", "asm.s", 1)
	for snap := 0; snap < 5; snap++ {
		for _, r := range []struct{ stack, n int64 }{{leak, int64(50 * (snap + 1))}, {idle, 16}} {
			row := schema.Sample{SnapshotTS: ts(snap), Profile: schema.ProfileGoroutine, StackID: r.stack, Source: "p"}
			row.Set(schema.ColCount, r.n)
			s.add(row)
		}
	}
	rep, err := analysis.Analyze(s.open(), mem, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Suspects) != 1 || rep.Suspects[0].Location != "main.wait" || rep.Suspects[0].State != "select" ||
		rep.Suspects[0].Pattern != "select-without-cancel" || rep.Suspects[0].Count != 250 {
		t.Fatalf("suspects %+v", rep.Suspects)
	}
	if len(rep.Warnings) == 0 || len(rep.Series.Goroutines) != 5 || rep.Series.Goroutines[4].Value != 266 {
		t.Errorf("warnings %v series %v", rep.Warnings, rep.Series.Goroutines)
	}
	// Without dumps the peak is the profiles' largest total.
	if rep.Bundle.PeakGoroutines != 266 {
		t.Errorf("peak_goroutines %d, want 266 (the largest goroutine-profile total)", rep.Bundle.PeakGoroutines)
	}
}
