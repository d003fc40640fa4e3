package gotrace

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

func byGoid(gs []schema.TraceGoroutine) map[int64][]schema.TraceGoroutine {
	m := map[int64][]schema.TraceGoroutine{}
	for _, g := range gs {
		m[g.Goid] = append(m[g.Goid], g)
	}
	return m
}

// TestIngestProgram ingests one trace window of testdata/prog and checks
// the tables against what the program says it did.
func TestIngestProgram(t *testing.T) {
	rec := record(t)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	before := time.Now()
	dir, arts := ingestFiles(t, mem, Options{}, rec.window1)
	tb := readTables(t, dir, mem)

	checkProgramSource(t, arts[0], tb, before)
	c := newProgramGoroutines(t, tb, rec.sum)
	c.checkLeakers(t)
	c.checkEnded(t)
	c.checkTransitions(t, dir)
	checkSpans(t, tb.spans, rec.sum.Main)
	checkProgramMetrics(t, tb)
}

// checkProgramSource checks the artifact a of one trace window and what the
// manifest says of the trace source: its settings, several generations,
// clock_sync rows, and a time range around before, when the test started.
func checkProgramSource(t *testing.T, a bundle.Artifact, tb *tables, before time.Time) {
	t.Helper()
	if a.Kind != bundle.SourceTrace || a.Status != bundle.StatusComplete || a.Detail != "" || a.Rows == 0 {
		t.Fatalf("artifact %+v", a)
	}
	src := tb.manifest.Source(bundle.SourceTrace)
	if src.Settings[SettingClock] != ClockSnapshot || src.Settings[SettingFormat] != "go 1.26" || src.Settings[SettingWindows] != "1" {
		t.Errorf("trace source settings %v", src.Settings)
	}
	if src.Counters[CounterGenerations] < 2 {
		t.Errorf("generations %d, want several (GODEBUG=traceadvanceperiod)", src.Counters[CounterGenerations])
	}
	if len(tb.clockSync) < 2 || tb.clockSync[0].Source != bundle.SourceTrace {
		t.Errorf("clock_sync rows %v, want one per generation", tb.clockSync)
	}
	// Wall times: the trace was recorded moments ago.
	st, end := tb.manifest.Start, tb.manifest.End
	if st.After(end) || before.Sub(st) > 10*time.Minute || st.Sub(before) > time.Minute {
		t.Errorf("time range %v .. %v, test started %v", st, end, before)
	}
}

// programGoroutines is one trace window of testdata/prog read back: its
// goroutine rows by goid and what the program says it did.
type programGoroutines struct {
	tb  *tables
	sum progSummary
	gs  map[int64][]schema.TraceGoroutine
}

// newProgramGoroutines indexes tb's goroutines by goid, checking each has
// one row.
func newProgramGoroutines(t *testing.T, tb *tables, sum progSummary) *programGoroutines {
	t.Helper()
	c := &programGoroutines{tb: tb, sum: sum, gs: byGoid(tb.goroutines)}
	for goid, rows := range c.gs {
		if len(rows) != 1 {
			t.Errorf("goroutine %d has %d rows in one window", goid, len(rows))
		}
	}
	return c
}

// one returns the row of goid, failing the test if there is none.
func (c *programGoroutines) one(t *testing.T, goid int64) schema.TraceGoroutine {
	t.Helper()
	rows := c.gs[goid]
	if len(rows) == 0 {
		t.Fatalf("goroutine %d missing", goid)
	}
	return rows[0]
}

// inRange reports whether ts lies in the bundle's time range.
func (c *programGoroutines) inRange(ts int64) bool {
	return ts >= c.tb.manifest.Start.UnixNano() && ts <= c.tb.manifest.End.UnixNano()
}

// ended lists the goroutines that end during the window.
func (c *programGoroutines) ended() []int64 {
	return append(slices.Clone(c.sum.Enders), c.sum.Spawner)
}

// checkLeakers checks every leaked goroutine was created in the window by
// its parent, starts in its leak function, and is still waiting there; the
// channel leakers were created from main.work.
func (c *programGoroutines) checkLeakers(t *testing.T) {
	t.Helper()
	sum := c.sum
	for _, l := range []struct {
		ids           []int64
		parent        int64
		start, reason string
	}{
		{sum.ChanLeakers, sum.Main, "main.leakChan", "chan receive"},
		{sum.SelectLeakers, sum.Main, "main.leakSelect", "select"},
		{sum.Spawned, sum.Spawner, "main.leakChan", "chan receive"},
	} {
		for _, goid := range l.ids {
			g := c.one(t, goid)
			if g.ParentGoid != l.parent || g.StartFunction != l.start || g.EndedTS != 0 ||
				g.LastState != "waiting" || g.LastReason != l.reason || !c.inRange(g.CreatedTS) {
				t.Errorf("leaked goroutine %d: %+v, want parent %d start %s waiting on %q", goid, g, l.parent, l.start, l.reason)
			}
			if fns := c.tb.stacks[g.LastStackID]; !slices.Contains(fns, l.start) {
				t.Errorf("goroutine %d last stack %v lacks %s", goid, fns, l.start)
			}
		}
	}
	for _, id := range sum.ChanLeakers {
		if fns := c.tb.stacks[c.one(t, id).CreationStackID]; len(fns) == 0 || fns[0] != "main.work" {
			t.Errorf("creation stack of %d: %v, want main.work first", id, fns)
		}
	}
}

// checkEnded checks the goroutines that end in the window end there, and
// main, alive before and after it, neither starts nor ends.
func (c *programGoroutines) checkEnded(t *testing.T) {
	t.Helper()
	for _, id := range c.ended() {
		g := c.one(t, id)
		if g.ParentGoid != c.sum.Main || g.EndedTS == 0 || g.EndedTS < g.CreatedTS || !c.inRange(g.EndedTS) || g.LastState != "notexist" {
			t.Errorf("ended goroutine %d: %+v", id, g)
		}
	}
	if m := c.one(t, c.sum.Main); m.EndedTS != 0 || m.CreatedTS != 0 || m.StartFunction == "" {
		t.Errorf("main goroutine (alive before and after the trace): %+v", m)
	}
}

// checkTransitions checks, in the bundle at dir, that every goroutine that
// ended in the trace has a transition to notexist, and the channel leakers
// block where they leak.
func (c *programGoroutines) checkTransitions(t *testing.T, dir string) {
	t.Helper()
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	all := make([]int64, 0, len(c.tb.goroutines))
	for _, g := range c.tb.goroutines {
		all = append(all, g.Goid)
	}
	trs, err := TransitionsFrom(b, nil, all, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var toNotExist, blocks int
	for _, tr := range trs {
		if tr.To == "notexist" {
			toNotExist++
		}
		if tr.To == "waiting" && tr.Reason == "chan receive" && slices.Contains(c.sum.ChanLeakers, tr.Goid) {
			blocks++
			if fns := c.tb.stacks[tr.StackID]; !slices.Contains(fns, "main.leakChan") {
				t.Errorf("block stack %v", fns)
			}
		}
	}
	var endedRows int
	for _, g := range c.tb.goroutines {
		if g.EndedTS != 0 {
			endedRows++
		}
	}
	if ended := c.ended(); toNotExist != endedRows || endedRows < len(ended) {
		t.Errorf("%d transitions to notexist, %d ended goroutines (want >= %d)", toNotExist, endedRows, len(ended))
	}
	if blocks != len(c.sum.ChanLeakers) {
		t.Errorf("%d chan-receive blocks of the leakers, want %d", blocks, len(c.sum.ChanLeakers))
	}
}

// checkProgramMetrics checks tb holds every runtime metric the trace
// carries, both GC cycles the program ran, and a final goroutine count
// that fits the program.
func checkProgramMetrics(t *testing.T, tb *tables) {
	t.Helper()
	for _, name := range []string{schema.MetricHeapLive, schema.MetricHeapGoal, schema.MetricGoroutines, schema.MetricGCCycle, schema.MetricSTWPause, schema.MetricGCPause} {
		if len(tb.metrics[name]) == 0 {
			t.Errorf("no %s metric", name)
		}
	}
	if n := len(tb.metrics[schema.MetricGCCycle]); n < 2 {
		t.Errorf("%d GC cycles, the program ran runtime.GC twice", n)
	}
	gm := tb.metrics[schema.MetricGoroutines]
	// At the end: main, 5+3+4 leakers and runtime goroutines.
	if last := gm[len(gm)-1].Value; last < 13 || last > 40 {
		t.Errorf("final goroutine count %v", last)
	}
}

// checkSpans checks the tasks, regions and logs testdata/prog made.
func checkSpans(t *testing.T, spans []schema.Span, mainG int64) {
	t.Helper()
	byName := map[string][]schema.Span{}
	ids := map[int64]schema.Span{}
	for _, s := range spans {
		byName[s.Kind+":"+s.Name] = append(byName[s.Kind+":"+s.Name], s)
		if _, dup := ids[s.ID]; dup {
			t.Errorf("duplicate span id %d", s.ID)
		}
		ids[s.ID] = s
	}
	get := func(key string, n int) []schema.Span {
		t.Helper()
		if len(byName[key]) != n {
			t.Fatalf("%d spans %s, want %d (all: %v)", len(byName[key]), key, n, spans)
		}
		return byName[key]
	}
	root := get("task:root", 1)[0]
	if root.ParentID != 0 || root.StartTS == 0 || root.EndTS <= root.StartTS || root.Goid != mainG {
		t.Errorf("root task %+v", root)
	}
	for _, name := range []string{"child1", "child2"} {
		c := get("task:"+name, 1)[0]
		if c.ParentID != root.ID || c.EndTS == 0 || c.StartTS < root.StartTS || c.EndTS > root.EndTS {
			t.Errorf("task %s %+v (root %d)", name, c, root.ID)
		}
	}
	for _, outer := range get("region:outer", 2) {
		if p := ids[outer.ParentID]; p.Kind != schema.SpanTask || !strings.HasPrefix(p.Name, "child") || outer.TaskID != p.ID {
			t.Errorf("region outer %+v has parent %+v", outer, p)
		}
	}
	for _, inner := range get("region:inner", 2) {
		p := ids[inner.ParentID]
		if p.Name != "outer" || inner.StartTS < p.StartTS || inner.EndTS > p.EndTS || inner.EndTS == 0 {
			t.Errorf("region inner %+v not nested in %+v", inner, p)
		}
	}
	logs := get("log:step", 2)
	for _, l := range logs {
		p := ids[l.ParentID]
		if p.Name != "inner" || l.StartTS != l.EndTS || l.StartTS < p.StartTS || l.StartTS > p.EndTS {
			t.Errorf("log %+v not inside %+v", l, p)
		}
		if parentTask := ids[ids[p.ParentID].ParentID]; l.Message != parentTask.Name {
			t.Errorf("log message %q in task %q", l.Message, parentTask.Name)
		}
	}
	forever := get("task:forever", 1)[0]
	if forever.EndTS != 0 || forever.StartTS == 0 || forever.ParentID != 0 {
		t.Errorf("never-ended task %+v", forever)
	}
	open := get("region:open-region", 1)[0]
	if open.EndTS != 0 || open.ParentID != forever.ID || open.StartTS < forever.StartTS {
		t.Errorf("open region %+v", open)
	}
}

// mergeWindows applies the documented merge rule (doc.go) to the rows of
// several windows.
func mergeWindows(rows []schema.TraceGoroutine) map[int64]schema.TraceGoroutine {
	out := map[int64]schema.TraceGoroutine{}
	for _, r := range rows {
		m, ok := out[r.Goid]
		if !ok {
			out[r.Goid] = r
			continue
		}
		if m.CreatedTS == 0 && r.CreatedTS != 0 {
			m.CreatedTS, m.ParentGoid, m.CreationStackID = r.CreatedTS, r.ParentGoid, r.CreationStackID
			m.StartFunction = r.StartFunction
		}
		if m.StartFunction == "" {
			m.StartFunction = r.StartFunction
		}
		if r.EndedTS != 0 {
			m.EndedTS = r.EndedTS
		}
		// rows come in window order: the later row has the last state.
		if r.LastReason != "" || r.LastState != "waiting" {
			m.LastReason = r.LastReason
		}
		m.LastState, m.LastStackID = r.LastState, r.LastStackID
		out[r.Goid] = m
	}
	return out
}

// TestIngestWindows ingests two trace windows of one run of testdata/prog
// into one bundle: goroutines alive in both have a row in each, which
// merge into one life.
func TestIngestWindows(t *testing.T) {
	rec := record(t)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir, arts := ingestFiles(t, mem, Options{}, rec.window1, rec.window2)
	tb := readTables(t, dir, mem)
	for _, a := range arts {
		if a.Status != bundle.StatusComplete {
			t.Fatalf("artifact %+v", a)
		}
	}
	if w := tb.manifest.Source(bundle.SourceTrace).Settings[SettingWindows]; w != "2" {
		t.Errorf("windows setting %q", w)
	}
	checkWindowRows(t, tb, rec.sum)
	checkMergedWindows(t, tb, rec.sum)
	checkWindowSpans(t, tb.spans)
}

// checkWindowRows checks which windows each goroutine has a row in.
func checkWindowRows(t *testing.T, tb *tables, sum progSummary) {
	t.Helper()
	gs := byGoid(tb.goroutines)
	// Leaked goroutines appear in both windows; in the second they have no
	// creation (they existed when it began) but keep their start function.
	for _, id := range append(slices.Clone(sum.ChanLeakers), sum.Spawned...) {
		rows := gs[id]
		if len(rows) != 2 {
			t.Fatalf("leaker %d: %d rows, want one per window", id, len(rows))
		}
		w1, w2 := rows[0], rows[1]
		if w1.CreatedTS == 0 || w2.CreatedTS != 0 || w2.ParentGoid != 0 || w2.StartFunction != "main.leakChan" || w2.LastState != "waiting" {
			t.Errorf("leaker %d rows %+v / %+v", id, w1, w2)
		}
	}
	// Ended goroutines appear only in the first window.
	for _, id := range sum.Enders {
		if len(gs[id]) != 1 {
			t.Errorf("ender %d: %d rows", id, len(gs[id]))
		}
	}
	w2 := gs[sum.Window2Leaker]
	if len(w2) != 1 || w2[0].ParentGoid != sum.Main || w2[0].CreatedTS == 0 {
		t.Errorf("window-2 goroutine %d rows %+v", sum.Window2Leaker, w2)
	}
}

// checkMergedWindows checks a leaker's rows of both windows merge into its
// whole life, and window 2 follows window 1 on the timeline.
func checkMergedWindows(t *testing.T, tb *tables, sum progSummary) {
	t.Helper()
	merged := mergeWindows(tb.goroutines)
	for _, id := range sum.ChanLeakers {
		g := merged[id]
		if g.ParentGoid != sum.Main || g.CreatedTS == 0 || g.EndedTS != 0 || g.LastReason != "chan receive" {
			t.Errorf("merged leaker %d: %+v", id, g)
		}
	}
	for _, id := range sum.Spawned {
		if g := merged[id]; g.ParentGoid != sum.Spawner {
			t.Errorf("merged spawned %d: parent %d, want %d", id, g.ParentGoid, sum.Spawner)
		}
	}
	var end1, start2 int64
	for _, g := range tb.goroutines {
		if g.Goid == sum.Window2Leaker {
			start2 = g.CreatedTS
		}
		if slices.Contains(sum.Enders, g.Goid) {
			end1 = max(end1, g.EndedTS)
		}
	}
	if start2 <= end1 {
		t.Errorf("window 2 creation %d not after window 1 ends %d", start2, end1)
	}
}

// checkWindowSpans checks span ids stay unique across windows and the
// second window reports the task and region still open.
func checkWindowSpans(t *testing.T, spans []schema.Span) {
	t.Helper()
	seen := map[int64]bool{}
	for _, s := range spans {
		if seen[s.ID] {
			t.Errorf("span id %d repeated", s.ID)
		}
		seen[s.ID] = true
	}
	var open int
	for _, s := range spans {
		if s.Name == "forever" || s.Name == "open-region" {
			open++
		}
	}
	if open < 2 {
		t.Errorf("%d open spans over both windows", open)
	}
}
