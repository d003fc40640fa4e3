package analysis_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/arrow/util"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
	"github.com/leakscope/leakscope/samples"
)

// benchBundle is a bundle a benchmark writes once per process, under the
// one temporary directory TestMain removes.
type benchBundle struct {
	name  string
	write func(dir string) error
	once  sync.Once
	dir   string
	err   error
}

var (
	tmpOnce sync.Once
	tmpRoot string
	tmpErr  error
)

// path writes the bundle the first time it is asked for and returns its
// directory.
func (bb *benchBundle) path(tb testing.TB) string {
	bb.once.Do(func() {
		tmpOnce.Do(func() { tmpRoot, tmpErr = os.MkdirTemp("", "leakscope-bench-") })
		if bb.err = tmpErr; bb.err != nil {
			return
		}
		bb.dir = filepath.Join(tmpRoot, bb.name)
		bb.err = bb.write(bb.dir)
	})
	if bb.err != nil {
		tb.Fatal(bb.err)
	}
	return bb.dir
}

var big = &benchBundle{name: "big.lsb", write: writeBigBundle}

func TestMain(m *testing.M) {
	code := m.Run()
	if tmpRoot != "" {
		os.RemoveAll(tmpRoot)
	}
	samples.Cleanup()
	os.Exit(code)
}

// bigBundle writes (once per process) a bundle with 1,000,000 goroutine
// rows — ten dumps of 100,000 goroutines over 100 distinct stacks, three of
// them leaking — and 100 heap snapshots of 2,000 allocation stacks.
func bigBundle(tb testing.TB) string { return big.path(tb) }

func writeBigBundle(dir string) error {
	m := bundle.NewManifest("bench", "test")
	m.Start, m.End = t0, t0.Add(100*time.Minute)
	w, err := bundle.Create(dir, m, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	const stacks, perSnap, snaps = 100, 100_000, 10
	states := []string{"chan receive", "select", "IO wait", "sync.Mutex.Lock", "chan send", "sleep"}
	ids := make([]int64, stacks)
	for i := range ids {
		fr := []bundle.StackFrame{{Function: "runtime.gopark", File: "proc.go", Line: 425}}
		for d := 0; d < 12; d++ {
			fr = append(fr, bundle.StackFrame{Function: fmt.Sprintf("example.com/svc/pkg%d.fn%d", i, d), File: fmt.Sprintf("/src/pkg%d/f.go", i), Line: int64(10 + d)})
		}
		fr = append(fr, bundle.StackFrame{Function: "runtime.goexit", File: "asm.s", Line: 1})
		if ids[i], err = w.StackID(fr); err != nil {
			return err
		}
	}
	next := int64(1_000_000)
	for s := 0; s < snaps; s++ {
		at := t0.Add(time.Duration(s) * 10 * time.Minute).UnixNano()
		leak := 1000 * (s + 1) // per leaking stack
		stable := (perSnap - 3*leak) / (stacks - 3)
		rows := 0
		for i := 0; i < stacks && rows < perSnap; i++ {
			n := stable
			if i < 3 {
				n = leak
			}
			if i == stacks-1 {
				n = perSnap - rows
			}
			for k := 0; k < n; k++ {
				goid := int64(i*100_000 + k) // stable members keep their goid
				if i >= 50 {                 // half the stable stacks churn
					next++
					goid = next
				}
				if err := w.Append(schema.Goroutine{SnapshotTS: at, Goid: goid, State: states[i%len(states)], WaitMinutes: int64(s),
					StackID: ids[i], CreatorGoid: int64(1 + i), CreatorFunction: fmt.Sprintf("example.com/svc/pkg%d.start", i%20), Source: "d"}); err != nil {
					return err
				}
			}
			rows += n
		}
	}
	const heapStacks, heapSnaps = 2000, 100
	hids := make([]int64, heapStacks)
	for i := range hids {
		fr := []bundle.StackFrame{{Function: fmt.Sprintf("example.com/svc/alloc%d.make", i), File: "/src/a.go", Line: int64(i + 1)}, {Function: "example.com/svc.handle", File: "/src/h.go", Line: 7}}
		if hids[i], err = w.StackID(fr); err != nil {
			return err
		}
	}
	for s := 0; s < heapSnaps; s++ {
		at := t0.Add(time.Duration(s) * time.Minute).UnixNano()
		for i, id := range hids {
			v := int64(1<<20 + (i%7)*4096*(s%5))
			if i < 5 {
				v = int64(1<<20 + s*(i+1)<<18) // growing
			}
			row := schema.Sample{SnapshotTS: at, Profile: schema.ProfileHeap, StackID: id, Source: "h"}
			row.Set(schema.ColInuseSpace, v)
			row.Set(schema.ColInuseObjects, v/64)
			row.Set(schema.ColAllocSpace, v*3)
			row.Set(schema.ColAllocObjects, v/20)
			if err := w.Append(row); err != nil {
				return err
			}
		}
	}
	return w.Close()
}

// uncompressed sums the Arrow buffer sizes of every table of the bundle.
func uncompressed(tb testing.TB, b *bundle.Bundle) int64 {
	var total int64
	for _, name := range schema.TableNames {
		err := b.ReadTable(name, memory.DefaultAllocator, func(rec arrow.Record) error {
			total += util.TotalRecordSize(rec)
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return total
}

// BenchmarkAnalyzeMillionGoroutines analyses the big bundle and reports
// the peak Go heap during the analysis and the bundle's uncompressed size.
func BenchmarkAnalyzeMillionGoroutines(b *testing.B) {
	dir := bigBundle(b)
	bd, err := bundle.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	size := uncompressed(b, bd)
	var peak uint64
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runtime.GC()
		c0 := cpuTime()
		stop := watchHeap(&peak)
		rep, err := analysis.Analyze(bd, memory.DefaultAllocator, analysis.Options{})
		stop()
		cpu += cpuTime() - c0
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Suspects) < 3 || rep.Bundle.GoroutineRows != 1_000_000 {
			b.Fatalf("suspects %d rows %d", len(rep.Suspects), rep.Bundle.GoroutineRows)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(size)/(1<<20), "uncompressed-MB")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

// watchHeap samples the live Go heap every 5 ms into peak until stopped.
func watchHeap(peak *uint64) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			*peak = max(*peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// cpuTime is the process's user plus system CPU time; on a loaded machine
// it measures the analysis better than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAncestryMillionGoroutines builds the creation tree of the big
// bundle (every distinct goroutine id is kept).
func BenchmarkAncestryMillionGoroutines(b *testing.B) {
	bd, err := bundle.Open(bigBundle(b))
	if err != nil {
		b.Fatal(err)
	}
	var peak uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runtime.GC()
		stop := watchHeap(&peak)
		tree, err := analysis.Ancestry(bd, memory.DefaultAllocator)
		stop()
		if err != nil || tree.Goroutines == 0 {
			b.Fatalf("tree %v err %v", tree, err)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

// BenchmarkLifetimesMillionGoroutines computes the timeline bars of the
// big bundle, downsampled to 2,000.
func BenchmarkLifetimesMillionGoroutines(b *testing.B) {
	bd, err := bundle.Open(bigBundle(b))
	if err != nil {
		b.Fatal(err)
	}
	var peak uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runtime.GC()
		stop := watchHeap(&peak)
		v, err := analysis.Lifetimes(bd, memory.DefaultAllocator, time.Time{}, time.Time{}, 2000)
		stop()
		if err != nil || len(v.Bars) != 2000 {
			b.Fatalf("bars %d err %v", len(v.Bars), err)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

var suspects = &benchBundle{name: "suspects.lsb", write: writeSuspectsBundle}

// leakingStacks is the number of leaking stacks of suspectsBundle, 20,000
// unless -suspects says otherwise (to see how the cost grows with them).
var leakingStacks = flag.Int("suspects", 20_000, "leaking stacks of BenchmarkAnalyzeTwentyThousandSuspects's bundle")

// suspectsRows is the goroutine rows of suspectsBundle: the leaking
// stacks with 1 to 9 goroutines in nine dumps, 100 stable ones with 111.
func suspectsRows() int64 { return int64(*leakingStacks)*45 + 100*111*9 }

// suspectsBundle writes (once per process) a bundle with about 1,000,000
// goroutine rows in nine dumps where 20,000 distinct stacks (-suspects) each leak
// one more goroutine per dump (900,000 rows) beside 100 stable stacks.
func suspectsBundle(tb testing.TB) string { return suspects.path(tb) }

func writeSuspectsBundle(dir string) error {
	m := bundle.NewManifest("bench", "test")
	m.Start, m.End = t0, t0.Add(90*time.Minute)
	w, err := bundle.Create(dir, m, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	const stable, snaps, stableRows = 100, 9, 111
	leaking := *leakingStacks
	states := []string{"chan receive", "select", "sync.Mutex.Lock", "chan send"}
	ids := make([]int64, leaking+stable)
	for i := range ids {
		fr := []bundle.StackFrame{{Function: "runtime.gopark", File: "proc.go", Line: 425}}
		for d := 0; d < 6; d++ {
			fr = append(fr, bundle.StackFrame{Function: fmt.Sprintf("example.com/svc/pkg%d.fn%d", i%500, d), File: fmt.Sprintf("/src/pkg%d/f.go", i%500), Line: int64(10 + d + 10*(i/500))})
		}
		fr = append(fr, bundle.StackFrame{Function: "runtime.goexit", File: "asm.s", Line: 1})
		if ids[i], err = w.StackID(fr); err != nil {
			return err
		}
	}
	for s := 0; s < snaps; s++ {
		at := t0.Add(time.Duration(s) * 10 * time.Minute).UnixNano()
		for i, id := range ids {
			n, base := s+1, int64(i)*100 // leaked goroutines stay, one more per dump
			if i >= leaking {
				n, base = stableRows, 10_000_000+int64(i)*1000
			}
			for k := 0; k < n; k++ {
				row := schema.Goroutine{SnapshotTS: at, Goid: base + int64(k), State: states[i%len(states)], WaitMinutes: int64(s - k),
					StackID: id, CreatorGoid: int64(1 + i%50), CreatorFunction: fmt.Sprintf("example.com/svc/pkg%d.start", i%200), Source: "d"}
				if err := w.Append(row); err != nil {
					return err
				}
			}
		}
	}
	return w.Close()
}

// BenchmarkAnalyzeTwentyThousandSuspects analyses a bundle of about
// 1,000,000 goroutine rows with 20,000 leaking stacks, each its own suspect, and
// reports the CPU time and peak Go heap of one analysis.
func BenchmarkAnalyzeTwentyThousandSuspects(b *testing.B) {
	bd, err := bundle.Open(suspectsBundle(b))
	if err != nil {
		b.Fatal(err)
	}
	var peak uint64
	var cpu time.Duration
	var suspects int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runtime.GC()
		c0 := cpuTime()
		stop := watchHeap(&peak)
		rep, err := analysis.Analyze(bd, memory.DefaultAllocator, analysis.Options{})
		stop()
		cpu += cpuTime() - c0
		if err != nil {
			b.Fatal(err)
		}
		if rep.Bundle.GoroutineRows != suspectsRows() {
			b.Fatalf("rows %d", rep.Bundle.GoroutineRows)
		}
		suspects = len(rep.Suspects)
	}
	b.ReportMetric(float64(suspects), "suspects")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}
