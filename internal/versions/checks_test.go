package versions

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// minSnapshots is the fewest dumps and profile snapshots a case must
// have (the capture runs until it has them).
const minSnapshots = 3

// checkPprof: the goroutine, heap, allocs and CPU profiles of every
// snapshot were parsed, and the goroutine profile counts the leak growing.
func checkPprof(t *testing.T, c *captured) {
	if s := c.source(bundle.SourcePprof); s.Status != bundle.StatusComplete {
		t.Fatalf("pprof source %s: %s", s.Status, s.Detail)
	}
	snaps := map[string]map[int64]bool{}
	leakCount := map[int64]int64{}
	var churnAllocs int64
	for _, s := range c.samples {
		if snaps[s.profile] == nil {
			snaps[s.profile] = map[int64]bool{}
		}
		snaps[s.profile][s.ts] = true
		switch {
		case s.profile == schema.ProfileGoroutine && has(s.stack, leakFn):
			leakCount[s.ts] += s.count
		case s.profile == schema.ProfileAllocs && has(s.stack, churnFn):
			churnAllocs += s.allocObject
		}
	}
	for _, p := range []string{schema.ProfileGoroutine, schema.ProfileHeap, schema.ProfileAllocs} {
		if len(snaps[p]) < minSnapshots {
			t.Errorf("%s profile in %d snapshots, want %d", p, len(snaps[p]), minSnapshots)
		}
	}
	// The target is mostly idle: a 1 s window may hold no sample.
	cpu := 0
	for _, a := range c.m.Artifacts {
		if a.Profile == schema.ProfileCPU {
			cpu++
			if a.Status != bundle.StatusComplete {
				t.Errorf("CPU profile %s: %s %s", a.Name, a.Status, a.Detail)
			}
		}
	}
	if cpu == 0 {
		t.Error("no CPU profile")
	}
	ts := slices.Sorted(maps.Keys(snaps[schema.ProfileGoroutine]))
	if len(ts) < 2 || leakCount[ts[len(ts)-1]] <= leakCount[ts[0]] {
		t.Errorf("goroutine profile: %s goroutines per snapshot %v, want growth", leakFn, leakCount)
	}
	if churnAllocs == 0 {
		t.Errorf("allocs profile has no samples in %s", churnFn)
	}
}

// checkDumps: every dump parsed; the leaked workers, all created by the
// producer, only accumulate; the idler stays parked and unmarked.
func checkDumps(t *testing.T, c *captured) {
	if s := c.source(bundle.SourceDump); s.Status != bundle.StatusComplete {
		t.Fatalf("dump source %s: %s", s.Status, s.Detail)
	}
	for _, a := range c.m.Artifacts {
		// Only a dump in flight at the end may be cut, and says why.
		cut := a.Status == bundle.StatusTruncated && strings.Contains(a.Detail, "reply cut")
		if a.Kind == bundle.SourceDump && (a.Status != bundle.StatusComplete || a.Rows == 0) && !cut {
			t.Errorf("dump %s: %s, %d rows: %s", a.Name, a.Status, a.Rows, a.Detail)
		}
	}
	if len(c.dumps) < minSnapshots {
		t.Fatalf("%d dump snapshots, want %d", len(c.dumps), minSnapshots)
	}
	producer, idler := c.goidOf(creatorFn), c.goidOf(idleFn)
	var prev map[int64]bool
	for i, d := range c.dumps {
		workers := map[int64]bool{}
		idlers := 0
		for _, g := range d.gs {
			switch {
			case has(g.stack, leakFn) && strings.HasPrefix(g.state, "chan send"):
				workers[g.goid] = true
				if g.creator != creatorFn || g.creatorGoid != producer {
					t.Errorf("dump %d: worker %d created by %s in %d, want %s in %d", i, g.goid, g.creator, g.creatorGoid, creatorFn, producer)
				}
			case has(g.stack, idleFn):
				idlers++
				if g.goid != idler || !strings.HasPrefix(g.state, "chan receive") || leaked(g.state) {
					t.Errorf("dump %d: idler %d in state %q, want goroutine %d in chan receive", i, g.goid, g.state, idler)
				}
			}
		}
		if idlers != 1 {
			t.Errorf("dump %d: %d goroutines in %s, want 1", i, idlers, idleFn)
		}
		// The producer waits on one worker at a time: at most that one
		// may finish between dumps; every other stays leaked.
		gone := 0
		for g := range prev {
			if !workers[g] {
				gone++
			}
		}
		if gone > 1 {
			t.Errorf("dump %d: %d leaked workers of the previous dump are gone", i, gone)
		}
		prev = workers
	}
	first, last := leakedWorkers(c.dumps[0]), leakedWorkers(c.dumps[len(c.dumps)-1])
	t.Logf("%d dumps; workers blocked in %s: %d in the first, %d in the last", len(c.dumps), leakFn, first, last)
	if last < first+20 {
		t.Errorf("leaked workers grew from %d to %d over %d dumps, want at least 20 more", first, last, len(c.dumps))
	}
}

// createdAt reports whether ingest's creation time mono agrees with the
// raw trace's creation rc. Ingest reads each generation on its own, so it
// keeps an event's own time where the whole-file reader, which never goes
// back in time across generations, moved it later (rc.moved, see
// traceTick): a moved time is only an upper bound.
func createdAt(mono int64, rc *rawCreate, skew int64) bool {
	if rc.moved {
		return mono <= rc.at+skew
	}
	return abs(mono-rc.at) <= skew
}

func leakedWorkers(d dumpSnap) int {
	n := 0
	for _, g := range d.gs {
		if has(g.stack, leakFn) {
			n++
		}
	}
	return n
}

// checkTrace: each window's raw file has the toolchain's format, and
// ingest wrote every creation (with its parent and time) and every end it
// holds; leaked workers seen created in a trace have the dump's creator.
func checkTrace(t *testing.T, c *captured, toolchain string) {
	if s := c.source(bundle.SourceTrace); s.Status != bundle.StatusComplete {
		t.Fatalf("trace source %s: %s", s.Status, s.Detail)
	}
	if len(c.raw) < 2 {
		t.Fatalf("%d trace windows, want at least 2", len(c.raw))
	}
	created, ended := map[int64]traceG{}, map[int64]bool{}
	for _, g := range c.traceGs {
		if g.createdMono != 0 {
			created[g.goid] = g
		}
		if g.endedMono != 0 {
			ended[g.goid] = true
		}
	}
	var creates, ends, bad int
	for i, rt := range c.raw {
		if rt.format != formatOf(toolchain) {
			t.Errorf("window %d: trace format go 1.%d, want go 1.%d", i, rt.format, formatOf(toolchain))
		}
		for goid, rc := range rt.creates {
			creates++
			g, ok := created[goid]
			// With clock snapshots (Go 1.25+) ingest maps trace time
			// through each snapshot's monotonic reading.
			if !ok || g.parent != parentOf(rc) || !createdAt(g.createdMono, rc, rt.monoSkew+g.createdSlack) {
				if bad++; bad <= 5 {
					t.Errorf("window %d: goroutine %d created by %d at %d; ingested as %+v (found %v)", i, goid, rc.parent, rc.at, g, ok)
				}
			}
		}
		for goid := range rt.ends {
			ends++
			if !ended[goid] {
				if bad++; bad <= 5 {
					t.Errorf("window %d: end of goroutine %d not ingested", i, goid)
				}
			}
		}
	}
	t.Logf("%d windows, format go 1.%d: %d creations and %d ends, %d ingested wrong or missing; ingest wrote %d and %d",
		len(c.raw), c.raw[0].format, creates, ends, bad, len(created), len(ended))
	if creates < 20 || len(created) != creates || len(ended) != ends {
		t.Errorf("raw traces hold %d creations and %d ends, the bundle %d and %d", creates, ends, len(created), len(ended))
	}
	producer, seen := c.goidOf(creatorFn), 0
	for _, g := range c.dumps[len(c.dumps)-1].gs {
		if tg, ok := created[g.goid]; ok && has(g.stack, leakFn) {
			seen++
			if tg.parent != producer {
				t.Errorf("worker %d: trace parent %d, dump creator %d", g.goid, tg.parent, producer)
			}
		}
	}
	if seen == 0 {
		t.Error("no leaked worker of the last dump was created inside a trace window")
	}
}

// parentOf is the creator goid the eBPF probe and ingest report: 0 when
// the trace names no goroutine.
func parentOf(rc *rawCreate) int64 { return max(rc.parent, 0) }

// checkLeakProfile: where the runtime serves goroutineleak it reports the
// leaked workers and nothing else, and later dumps mark them "(leaked)";
// elsewhere there is no such profile and no mark.
func checkLeakProfile(t *testing.T, c *captured, toolchain string) {
	_, served := LeakProfileExperiment(toolchain)
	byTS := map[int64]int64{}
	for _, s := range c.samples {
		if s.profile != schema.ProfileGoroutineLeak {
			continue
		}
		byTS[s.ts] += s.count
		if !has(s.stack, leakFn) && s.count > 0 {
			t.Errorf("goroutineleak profile reports %d goroutines at %v", s.count, s.stack)
		}
	}
	marks := 0
	for _, d := range c.dumps {
		for _, g := range d.gs {
			if leaked(g.state) {
				marks++
				if !has(g.stack, leakFn) {
					t.Errorf("dump marks goroutine %d (%s) leaked, at %v", g.goid, g.state, g.stack)
				}
			}
		}
	}
	if !served {
		if len(byTS) != 0 || marks != 0 {
			t.Errorf("%s: goroutineleak profile in %d snapshots and %d (leaked) marks, want none", toolchain, len(byTS), marks)
		}
		return
	}
	ts := slices.Sorted(maps.Keys(byTS))
	if len(ts) < minSnapshots || byTS[ts[len(ts)-1]] == 0 {
		t.Fatalf("goroutineleak profile counts %v, want %d snapshots ending with leaks", byTS, minSnapshots)
	}
	// A dump taken after a goroutineleak profile shows every goroutine
	// that profile reported with the mark.
	checked := 0
	for _, d := range c.dumps {
		i, _ := slices.BinarySearch(ts, d.ts)
		if i == 0 {
			continue
		}
		want := byTS[ts[i-1]]
		got := 0
		for _, g := range d.gs {
			if leaked(g.state) {
				got++
			}
		}
		checked++
		if int64(got) < want {
			t.Errorf("dump at %d marks %d goroutines (leaked), the goroutineleak profile before it reported %d", d.ts, got, want)
		}
	}
	t.Logf("goroutineleak counts %v; %d later dumps checked for marks, %d marks in all", byTS, checked, marks)
	if checked == 0 {
		t.Error("no dump follows a goroutineleak profile")
	}
}

// checkReport: the analysis names the leak as its top goroutine suspect,
// with its creator, and ranks the healthy idler below it. (Heap suspects
// are logged, not judged: the target's steady 1 MiB allocation window is
// estimated from few samples, which analysis may read as growth.)
func checkReport(t *testing.T, c *captured) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rep, err := analysis.Analyze(c.b, mem, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var top *analysis.Suspect
	for i, s := range rep.Suspects {
		t.Logf("suspect %s %s %s at %s created by %s, count %d, score %.0f", s.ID, s.Kind, s.Pattern, s.Location, s.Creator, s.Count, s.Score)
		if top == nil && s.Kind == analysis.KindGoroutine {
			top = &rep.Suspects[i]
		}
	}
	if top == nil {
		t.Fatalf("no goroutine suspect; warnings %q", rep.Warnings)
	}
	if top.Location != leakFn || top.Creator != creatorFn || top.Count < 20 {
		t.Errorf("top goroutine suspect %s at %s created by %s, %d goroutines; want %s created by %s", top.ID, top.Location, top.Creator, top.Count, leakFn, creatorFn)
	}
	for _, s := range rep.Suspects {
		if s.Location == idleFn && s.Score >= top.Score {
			t.Errorf("healthy %s scored %.0f, as high as the leak", idleFn, s.Score)
		}
	}
}

// isRoot reports whether eBPF can be expected to attach.
func isRoot() bool { return os.Geteuid() == 0 }
