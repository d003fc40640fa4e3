package analysis_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/report"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
	"github.com/leakscope/leakscope/internal/format"
)

// heapBundle writes heap snapshots 6 s apart of the given stacks' series
// (bytes per snapshot), each profile stating the sampling period.
func heapBundle(t *testing.T, mem memory.Allocator, period int64, series map[int64][]int64, s *synth) *bundle.Bundle {
	t.Helper()
	return heapBundleSized(t, mem, period, 4096, 6*time.Second, series, s)
}

// heapBundleSized is heapBundle with objects of objSize bytes and
// snapshots every interval.
func heapBundleSized(t *testing.T, mem memory.Allocator, period, objSize int64, interval time.Duration, series map[int64][]int64, s *synth) *bundle.Bundle {
	t.Helper()
	n := 0
	for _, v := range series {
		n = len(v)
	}
	for i := 0; i < n; i++ {
		at := t0.Add(time.Duration(i) * interval)
		for stack, v := range series {
			row := schema.Sample{SnapshotTS: at.UnixNano(), Profile: schema.ProfileHeap, StackID: stack, Source: "h"}
			row.Set(schema.ColInuseSpace, v[i])
			row.Set(schema.ColInuseObjects, v[i]/objSize)
			s.add(row)
		}
		s.w.Update(func(m *bundle.Manifest) {
			m.Artifacts = append(m.Artifacts, bundle.Artifact{Name: "heap", Kind: bundle.SourcePprof, Profile: schema.ProfileHeap, Time: at, Period: period})
		})
	}
	return s.open()
}

func linear(step int64, n int) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = step * int64(i)
	}
	return v
}

// TestHeapFloorFollowsSampling: a cache growing 4 KiB every 50 ms (490 KB
// in 6 s) is a suspect when the profile samples every 4 KiB, and is not
// when it samples every 512 KiB (then the same bytes are below the
// sampling error).
func TestHeapFloorFollowsSampling(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	for _, c := range []struct {
		period int64
		want   bool
	}{{4096, true}, {512 << 10, false}} {
		s := newSynth(t, mem)
		cache := s.stack("main.fill", "/src/cache.go", 12, "main.main", "/src/main.go", 3)
		b := heapBundle(t, mem, c.period, map[int64][]int64{cache: linear(82<<10, 7)}, s)
		rep, err := analysis.Analyze(b, mem, analysis.Options{Rules: analysis.DefaultRules()})
		if err != nil {
			t.Fatal(err)
		}
		got := len(rep.Suspects) == 1 && rep.Suspects[0].Location == "main.fill"
		if got != c.want {
			t.Errorf("MemProfileRate %d: suspect %v, want %v (growers %+v)", c.period, got, c.want, rep.Heap.Growers)
			continue
		}
		g := rep.Heap.Growers[0]
		if !strings.Contains(g.Range.FloorBasis, format.Bytes(float64(c.period))) {
			t.Errorf("floor %v (%s) does not follow the period %d", g.Range.Floor, g.Range.FloorBasis, c.period)
		}
	}
}

// TestHeapFloorFollowsObjectSize: at the default MemProfileRate a 64 KiB
// object is recorded with probability 1 − e^(−1/8) and each record weighs
// 557 KB (here 8 objects, 512 KiB), so a steady window of 16 such objects (1 MiB) reads 0 to 4
// records from snapshot to snapshot. The series the version matrix showed
// as heap growth (one, two, three records at 1 s intervals) is within the
// sampling error and no suspect; the floor says why. Five records more
// over five snapshots, one at a time, is.
func TestHeapFloorFollowsObjectSize(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	const size, rate = 64 << 10, 512 << 10
	weight := size / -math.Expm1(-float64(size)/rate)
	// k records of 8 objects each (bytes and objects scaled alike, as the
	// runtime's profile does).
	records := func(ks ...int) []int64 {
		v := make([]int64, len(ks))
		for i, k := range ks {
			v[i] = int64(k) * 8 * size
		}
		return v
	}
	for _, c := range []struct {
		ks   []int
		want bool
	}{
		{[]int{1, 2, 3}, false},
		{[]int{0, 2, 4}, false},
		{[]int{1, 1, 2, 4}, false},
		{[]int{2, 3, 5, 7, 9}, true},
	} {
		s := newSynth(t, mem)
		st := s.stack("main.churn", "/src/churn.go", 9, "main.main", "/src/main.go", 3)
		b := heapBundleSized(t, mem, rate, size, time.Second, map[int64][]int64{st: records(c.ks...)}, s)
		rep, err := analysis.Analyze(b, mem, analysis.Options{Rules: analysis.DefaultRules()})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(rep.Suspects) > 0; got != c.want {
			t.Errorf("records %v: suspect %v, want %v (growers %+v)", c.ks, got, c.want, rep.Heap.Growers)
		}
		if len(rep.Heap.Growers) != 1 {
			t.Fatalf("records %v: growers %+v", c.ks, rep.Heap.Growers)
		}
		g := rep.Heap.Growers[0]
		if g.Range.Floor < 2*weight || !strings.Contains(g.Range.FloorBasis, "objects of 64.0 KiB") || !strings.Contains(g.Range.FloorBasis, format.Bytes(weight)) {
			t.Errorf("records %v: floor %v (%s), want at least two records of %s", c.ks, g.Range.Floor, g.Range.FloorBasis, format.Bytes(weight))
		}
	}
}

// TestHeapSingleStep: a site that rose once and stayed level (0, 1, 1, 1,
// 1 MiB) has no rate: no suspect, a "step" trend, no per-hour projection.
func TestHeapSingleStep(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	s := newSynth(t, mem)
	st := s.stack("main.warm", "/src/warm.go", 7, "main.main", "/src/main.go", 3)
	b := heapBundle(t, mem, 512<<10, map[int64][]int64{st: {0, 1 << 20, 1 << 20, 1 << 20, 1 << 20}}, s)
	rep, err := analysis.Analyze(b, mem, analysis.Options{Rules: analysis.DefaultRules()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Suspects) != 0 {
		t.Errorf("a single step is a suspect: %+v", rep.Suspects[0])
	}
	if len(rep.Heap.Growers) != 1 || rep.Heap.Growers[0].Range.Trend != analysis.TrendStep || rep.Heap.Growers[0].BytesPerMin != 0 {
		t.Fatalf("growers %+v", rep.Heap.Growers)
	}
	// Even reported at a low threshold, it says "rose once", not a rate.
	rep, err = analysis.Analyze(b, mem, analysis.Options{Rules: analysis.DefaultRules(), MinScore: -1})
	if err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	report.Markdown(&md, rep, report.Options{Postmortem: true})
	if strings.Contains(md.String(), "per hour") || len(rep.Suspects) > 0 && rep.Suspects[0].Display.Rate != "rose once by 1.0 MiB" {
		t.Errorf("a single step projected as a rate:\n%s", md.String())
	}
}

// TestHeapOneRowPerLine: three call paths to one allocating line are one
// row of the growth table and one suspect, whose figures are their sum.
func TestHeapOneRowPerLine(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	s := newSynth(t, mem)
	var stacks []int64
	for i, caller := range []string{"main.a", "main.b", "main.c"} {
		stacks = append(stacks, s.stack("main.record", "/src/rec.go", 39, caller, "/src/main.go", 10+i))
	}
	b := heapBundle(t, mem, 512<<10, map[int64][]int64{stacks[0]: linear(1<<20, 6), stacks[1]: linear(2<<20, 6), stacks[2]: linear(512<<10, 6)}, s)
	rep, err := analysis.Analyze(b, mem, analysis.Options{Rules: analysis.DefaultRules()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Heap.Growers) != 1 || len(rep.Suspects) != 1 {
		t.Fatalf("%d rows, %d suspects for one line", len(rep.Heap.Growers), len(rep.Suspects))
	}
	g, h := rep.Heap.Growers[0], rep.Suspects[0]
	want := int64(5 * (3<<20 + 512<<10))
	if g.InuseBytes != want || h.Count != want || g.BytesPerMin != h.GrowthPerMin || len(h.StackIDs) != 3 || g.HeapSuspect != h.ID {
		t.Errorf("row %d bytes %v/min, suspect %d bytes %v/min %v, want %d", g.InuseBytes, g.BytesPerMin, h.Count, h.GrowthPerMin, h.StackIDs, want)
	}
	// The evidence speaks of the same rise and rate.
	rise := format.Bytes(float64(want))
	if !strings.Contains(h.Evidence[0].Detail, "rose by "+rise) || !strings.Contains(h.Evidence[0].Detail, format.Bytes(h.GrowthPerMin)+"/min") || !strings.Contains(h.Evidence[0].Detail, "3 call paths") {
		t.Errorf("evidence %q, want a rise of %s at %s/min", h.Evidence[0].Detail, rise, format.Bytes(h.GrowthPerMin))
	}
}

// TestHeapHolderFromSource: buffers made at one line and put in a map a
// few lines down are reported as the map growing, from the source kept
// in the bundle, when the profile shows no bytes of the map itself.
func TestHeapHolderFromSource(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	s := newSynth(t, mem)
	st := s.stack("main.fill", "/src/cache.go", 12, "main.main", "/src/main.go", 3)
	s.add(schema.SourceCode{File: "/src/cache.go", Function: "main.fill", StartLine: 10, EndLine: 16, Status: schema.SourceOK, Source: "capture",
		Text: "func fill() {\n\tfor n := 0; ; n++ {\n\t\tbuf := make([]byte, 4096)\n\t\tmu.Lock()\n\t\tcache[n] = buf\n\t\tmu.Unlock()\n\t}\n}"})
	b := heapBundle(t, mem, 4096, map[int64][]int64{st: linear(82<<10, 7)}, s)
	rep, err := analysis.Analyze(b, mem, analysis.Options{Rules: analysis.DefaultRules()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Suspects) != 1 || rep.Suspects[0].Object != "map written at /src/cache.go:14 (values: slices made with make)" {
		t.Fatalf("suspects %+v", rep.Suspects)
	}
}

// TestSingleHeapSampleHoldsNothing: one runtime.malg sample (512 KiB at
// the default rate) seen in the last heap snapshot only is credited to no
// goroutine group, though a group keeps adding goroutines: the planted
// leak retains its own 12 MiB and not a byte more, and no grower row
// names it.
func TestSingleHeapSampleHoldsNothing(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	var malg int64
	b := leakyServiceWith(t, mem, func(s *synth, snap int, at int64) {
		if malg == 0 {
			malg = s.stack("runtime.malg", "proc.go", 1, "runtime.newproc1", "proc.go", 2, "runtime.systemstack", "asm.s", 3)
		}
		if snap == 5 {
			row := schema.Sample{SnapshotTS: at, Profile: schema.ProfileHeap, StackID: malg, Source: "h"}
			row.Set(schema.ColInuseSpace, 512<<10)
			row.Set(schema.ColInuseObjects, 1)
			s.add(row)
		}
	})
	rep, err := analysis.Analyze(b, mem, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Suspects {
		if s.Kind == analysis.KindGoroutine && s.Location == "main.leak" && s.RetainedBytes != 12<<20 {
			t.Errorf("%s retains %d B, want its own 12 MiB: one runtime.malg sample is credited to it", s.ID, s.RetainedBytes)
		}
	}
	for _, g := range rep.Heap.Growers {
		if g.Location == "runtime.malg" && g.Suspect != "" {
			t.Errorf("the single runtime.malg sample is attributed to %s", g.Suspect)
		}
	}
}
