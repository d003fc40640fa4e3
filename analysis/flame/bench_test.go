package flame

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

var benchDirs []string

// cpuTime returns the CPU time (user+system, all threads) the process has
// used so far. Benchmarks report it per op besides wall time, which on a
// shared, overloaded machine says little.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measureCPU starts a CPU-time measurement; the returned func reports
// cpu-ms/op.
func measureCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range benchDirs {
		os.RemoveAll(d)
	}
	if realData != nil {
		os.RemoveAll(realData.dir)
	}
	os.Exit(code)
}

type benchBundle struct {
	once sync.Once
	b    *bundle.Bundle
	err  error
}

var (
	goroutineBench benchBundle
	heapBench      benchBundle
)

func (bb *benchBundle) get(b *testing.B, name string, fill func(w *bundle.Writer) error) *bundle.Bundle {
	b.Helper()
	bb.once.Do(func() {
		dir, err := os.MkdirTemp("", "flamebench")
		if err != nil {
			bb.err = err
			return
		}
		benchDirs = append(benchDirs, dir)
		path := filepath.Join(dir, name+".lsb")
		w, err := bundle.Create(path, bundle.NewManifest(name, "bench"), memory.NewGoAllocator())
		if err != nil {
			bb.err = err
			return
		}
		if err := fill(w); err != nil {
			w.Abort()
			bb.err = err
			return
		}
		if bb.err = w.Close(); bb.err == nil {
			bb.b, bb.err = bundle.Open(path)
		}
	})
	if bb.err != nil {
		b.Fatal(bb.err)
	}
	return bb.b
}

// fillGoroutines writes 1,000,000 goroutine-profile rows of count 1 over
// 100 distinct stacks of depth 8 to 40, in one snapshot.
func fillGoroutines(w *bundle.Writer) error {
	rng := rand.New(rand.NewPCG(1, 2))
	stacks := make([]int64, 100)
	for i := range stacks {
		depth := 8 + rng.IntN(33)
		fr := make([]bundle.StackFrame, depth)
		for k := range fr {
			fn := fmt.Sprintf("svc/pkg%d.Func%d", k%7, rng.IntN(30))
			if k == 0 {
				fn = "runtime.gopark"
			}
			fr[k] = bundle.StackFrame{Function: fn, File: "/src/x.go", Line: int64(k)}
		}
		id, err := w.StackID(fr)
		if err != nil {
			return err
		}
		stacks[i] = id
	}
	for g := 0; g < 1_000_000; g++ {
		s := schema.Sample{SnapshotTS: smallT1, Profile: schema.ProfileGoroutine, StackID: stacks[rng.IntN(len(stacks))]}
		s.Set(schema.ColCount, 1)
		if err := w.Append(s); err != nil {
			return err
		}
	}
	return nil
}

const heapStacks = 100_000

// fillHeap writes two snapshots of a heap profile with 100,000 samples
// each. Stacks are built like a real service's: one of 2,000 call paths
// (depth 10 to 40, sharing their root side) into one of 300 library
// suffixes (depth 3 to 10) ending in one of 40 allocation sites; about a
// million tree nodes in all.
func fillHeap(w *bundle.Writer) error {
	rng := rand.New(rand.NewPCG(3, 4))
	fn := func(level, k int) bundle.StackFrame {
		return bundle.StackFrame{Function: fmt.Sprintf("svc/p%d.F%d", level%17, k), File: fmt.Sprintf("/src/p%d/y.go", level%17), Line: int64(10 + k%50)}
	}
	paths := make([][]bundle.StackFrame, 2000)
	for i := range paths {
		depth := 10 + rng.IntN(31)
		p := make([]bundle.StackFrame, depth) // root first
		for l := range p {
			p[l] = fn(l, rng.IntN(min(2000, 2<<min(l, 20))))
		}
		paths[i] = p
	}
	suffixes := make([][]bundle.StackFrame, 300)
	for i := range suffixes {
		depth := 3 + rng.IntN(8)
		p := make([]bundle.StackFrame, depth)
		for l := range p {
			p[l] = fn(100+l, rng.IntN(400))
		}
		suffixes[i] = p
	}
	stacks := make([]int64, 0, heapStacks)
	seen := map[[3]int]bool{}
	for len(stacks) < heapStacks {
		k := [3]int{rng.IntN(len(paths)), rng.IntN(len(suffixes)), rng.IntN(40)}
		if seen[k] {
			continue
		}
		seen[k] = true
		var fr []bundle.StackFrame // leaf first
		fr = append(fr, bundle.StackFrame{Function: fmt.Sprintf("svc/alloc.Site%d", k[2]), File: "/src/alloc/a.go", Line: int64(k[2])})
		suf := suffixes[k[1]]
		for l := len(suf) - 1; l >= 0; l-- {
			fr = append(fr, suf[l])
		}
		p := paths[k[0]]
		for l := len(p) - 1; l >= 0; l-- {
			fr = append(fr, p[l])
		}
		id, err := w.StackID(fr)
		if err != nil {
			return err
		}
		stacks = append(stacks, id)
	}
	for snap, ts := range []int64{smallT1, smallT2} {
		for _, id := range stacks {
			s := schema.Sample{SnapshotTS: ts, Profile: schema.ProfileHeap, StackID: id}
			v := int64(rng.IntN(1<<16) + 16)
			s.Set(schema.ColInuseSpace, v*int64(snap+1))
			s.Set(schema.ColInuseObjects, 1)
			s.Set(schema.ColAllocSpace, v*4)
			s.Set(schema.ColAllocObjects, 4)
			if err := w.Append(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// loadRecords reads the samples table into memory (retained records).
func loadRecords(b *testing.B, bd *bundle.Bundle) []arrow.Record {
	var recs []arrow.Record
	err := bd.ReadTable(schema.TableSamples, memory.DefaultAllocator, func(r arrow.Record) error {
		r.Retain()
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return recs
}

// buildLoaded builds a tree from records already in memory.
func buildLoaded(b *testing.B, st *Stacks, recs []arrow.Record, q Query) *Tree {
	n, err := normalize(q)
	if err != nil {
		b.Fatal(err)
	}
	sel := newSelector(n, st.NumStacks())
	for _, r := range recs {
		if err := addSamples(r, sel); err != nil {
			b.Fatal(err)
		}
	}
	t, nv, bv, err := sel.result(SourceSamples, false)
	if err != nil {
		b.Fatal(err)
	}
	t.Root, _ = st.tree(n, nv, bv)
	return t
}

func benchLoaded(b *testing.B, bd *bundle.Bundle, q Query, want int64) {
	st, err := LoadStacks(bd, memory.DefaultAllocator)
	if err != nil {
		b.Fatal(err)
	}
	recs := loadRecords(b, bd)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	defer measureCPU(b)()
	for i := 0; i < b.N; i++ {
		if t := buildLoaded(b, st, recs, q); want >= 0 && t.Total() != want {
			b.Fatalf("total %d, want %d", t.Total(), want)
		}
	}
}

func benchFromBundle(b *testing.B, bd *bundle.Bundle, q Query, want int64) {
	b.ReportAllocs()
	b.ResetTimer()
	defer measureCPU(b)()
	for i := 0; i < b.N; i++ {
		t, err := FromBundle(bd, memory.DefaultAllocator, q)
		if err != nil {
			b.Fatal(err)
		}
		if want >= 0 && t.Total() != want {
			b.Fatalf("total %d, want %d", t.Total(), want)
		}
	}
}

// BenchmarkGoroutines1M: 1,000,000 goroutine rows, ~100 stacks.
func BenchmarkGoroutines1M(b *testing.B) {
	bd := goroutineBench.get(b, "goroutines", fillGoroutines)
	q := Query{Profile: schema.ProfileGoroutine}
	b.Run("loaded", func(b *testing.B) { benchLoaded(b, bd, q, 1_000_000) })
	b.Run("from-bundle", func(b *testing.B) { benchFromBundle(b, bd, q, 1_000_000) })
	b.Run("loaded-focus-invert", func(b *testing.B) {
		benchLoaded(b, bd, Query{Profile: schema.ProfileGoroutine, Focus: []string{`pkg3\.Func1\d`}, Invert: true}, -1)
	})
}

// BenchmarkHeapLarge: two snapshots of 100,000 heap samples with deep
// stacks; the latest snapshot, and a diff against the first.
func BenchmarkHeapLarge(b *testing.B) {
	bd := heapBench.get(b, "heap", fillHeap)
	q := Query{Profile: schema.ProfileHeap}
	b.Run("loaded", func(b *testing.B) { benchLoaded(b, bd, q, -1) })
	b.Run("loaded-diff", func(b *testing.B) { benchLoaded(b, bd, Query{Profile: schema.ProfileHeap, Base: smallT1}, -1) })
	b.Run("from-bundle", func(b *testing.B) { benchFromBundle(b, bd, q, -1) })
	b.Run("load-stacks", func(b *testing.B) {
		b.ReportAllocs()
		defer measureCPU(b)()
		for i := 0; i < b.N; i++ {
			if _, err := LoadStacks(bd, memory.DefaultAllocator); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		t, err := FromBundle(bd, memory.DefaultAllocator, q)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("heap tree: %d nodes", t.Nodes())
		b.ReportAllocs()
		b.ResetTimer()
		defer measureCPU(b)()
		for i := 0; i < b.N; i++ {
			data, err := t.MarshalJSON()
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
		}
	})
}
