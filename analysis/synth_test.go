package analysis_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// t0 is the start of every synthetic bundle.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// synth writes bundles from rows for unit tests.
type synth struct {
	t   testing.TB
	w   *bundle.Writer
	dir string
}

func newSynth(t testing.TB, mem memory.Allocator) *synth {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s.lsb")
	m := bundle.NewManifest("synthetic", "test")
	m.Start, m.End = t0, t0.Add(10*time.Minute)
	m.Target.ModulePath = "example.com/svc"
	w, err := bundle.Create(dir, m, mem)
	if err != nil {
		t.Fatal(err)
	}
	return &synth{t: t, w: w, dir: dir}
}

// stack interns frames given as function, file, line triples, leaf first.
func (s *synth) stack(frames ...any) int64 {
	s.t.Helper()
	var fr []bundle.StackFrame
	for i := 0; i+2 < len(frames); i += 3 {
		fr = append(fr, bundle.StackFrame{Function: frames[i].(string), File: frames[i+1].(string), Line: int64(frames[i+2].(int))})
	}
	id, err := s.w.StackID(fr)
	if err != nil {
		s.t.Fatal(err)
	}
	return id
}

func (s *synth) add(rows ...schema.Row) {
	s.t.Helper()
	for _, r := range rows {
		if err := s.w.Append(r); err != nil {
			s.t.Fatal(err)
		}
	}
}

func (s *synth) open() *bundle.Bundle {
	s.t.Helper()
	if err := s.w.Close(); err != nil {
		s.t.Fatal(err)
	}
	b, err := bundle.Open(s.dir)
	if err != nil {
		s.t.Fatal(err)
	}
	return b
}

func ts(min int) int64 { return t0.Add(time.Duration(min) * time.Minute).UnixNano() }

// leakyService writes a bundle of six snapshots one minute apart holding:
//   - a leak: goroutines parked in chan send at main.leak, created by
//     main.handle (in goroutine 5, which runs main.serve, created by
//     main.main),
//     10 more per snapshot, never leaving;
//   - a stable pool: 50 workers in chan receive, same goids throughout;
//   - churn: 20-40 goroutines in IO wait, new goids every snapshot;
//   - heap: a steadily growing cache, a sawtooth buffer pool, and the
//     leak's own allocations (attributed to it).
func leakyService(t testing.TB, mem memory.Allocator) *bundle.Bundle {
	return leakyServiceWith(t, mem, nil)
}

// leakyServiceWith is leakyService with more rows: more is called once
// per snapshot (0 to 5, at its time) before the bundle is opened.
func leakyServiceWith(t testing.TB, mem memory.Allocator, more func(s *synth, snap int, at int64)) *bundle.Bundle {
	s := newSynth(t, mem)
	leakStack := s.stack("runtime.gopark", "proc.go", 1, "runtime.chansend1", "chan.go", 2, "main.leak", "/src/main.go", 40, "runtime.goexit", "asm.s", 3)
	poolStack := s.stack("runtime.gopark", "proc.go", 1, "runtime.chanrecv1", "chan.go", 3, "main.worker", "/src/main.go", 60, "runtime.goexit", "asm.s", 3)
	churnStack := s.stack("runtime.gopark", "proc.go", 1, "internal/poll.runtime_pollWait", "netpoll.go", 4, "net.(*conn).Read", "net.go", 5, "main.client", "/src/main.go", 80, "runtime.goexit", "asm.s", 3)
	serveStack := s.stack("runtime.gopark", "proc.go", 1, "main.serve", "/src/main.go", 20, "runtime.goexit", "asm.s", 3)
	mainStack := s.stack("runtime.gopark", "proc.go", 1, "main.main", "/src/main.go", 10, "runtime.main", "proc.go", 7)
	creatorLeak := s.stack("main.handle", "/src/main.go", 33)
	creatorServe := s.stack("main.main", "/src/main.go", 12)
	creatorPool := s.stack("main.startPool", "/src/main.go", 55)
	heapGrow := s.stack("main.(*cache).put", "/src/cache.go", 17, "main.handle", "/src/main.go", 31)
	heapSaw := s.stack("bytes.growSlice", "buffer.go", 1, "main.render", "/src/render.go", 9)
	heapLeak := s.stack("main.leak", "/src/main.go", 38, "runtime.goexit", "asm.s", 3)
	churnGoid := int64(10000)
	for snap := 0; snap < 6; snap++ {
		at := ts(snap)
		s.add(schema.Goroutine{SnapshotTS: at, Goid: 1, State: "select", StackID: mainStack, Source: "d"})
		s.add(schema.Goroutine{SnapshotTS: at, Goid: 5, State: "IO wait", StackID: serveStack, CreatorGoid: 1, CreatorFunction: "main.main", CreatorStackID: creatorServe, Source: "d"})
		for i := 0; i < 10*(snap+1); i++ {
			s.add(schema.Goroutine{SnapshotTS: at, Goid: int64(100 + i), State: "chan send", WaitMinutes: int64(snap - i/10),
				StackID: leakStack, CreatorGoid: 5, CreatorFunction: "main.handle", CreatorStackID: creatorLeak, Source: "d"})
		}
		for i := 0; i < 50; i++ {
			s.add(schema.Goroutine{SnapshotTS: at, Goid: int64(20 + i), State: "chan receive", WaitMinutes: int64(snap),
				StackID: poolStack, CreatorGoid: 1, CreatorFunction: "main.startPool", CreatorStackID: creatorPool, Source: "d"})
		}
		n := 20 + 20*(snap%2) // 20, 40, 20, 40, ...
		for i := 0; i < n; i++ {
			churnGoid++
			s.add(schema.Goroutine{SnapshotTS: at, Goid: churnGoid, State: "IO wait", StackID: churnStack, CreatorGoid: 5, CreatorFunction: "main.serve", Source: "d"})
		}
		grow := schema.Sample{SnapshotTS: at, Profile: schema.ProfileHeap, StackID: heapGrow, Source: "h"}
		grow.Set(schema.ColInuseSpace, int64(snap+1)*4<<20)
		grow.Set(schema.ColInuseObjects, int64(snap+1)*100)
		saw := schema.Sample{SnapshotTS: at, Profile: schema.ProfileHeap, StackID: heapSaw, Source: "h"}
		saw.Set(schema.ColInuseSpace, int64(1+snap%3)*8<<20)
		saw.Set(schema.ColInuseObjects, 10)
		leak := schema.Sample{SnapshotTS: at, Profile: schema.ProfileHeap, StackID: heapLeak, Source: "h"}
		leak.Set(schema.ColInuseSpace, int64(snap+1)*2<<20)
		leak.Set(schema.ColInuseObjects, int64(snap+1)*10)
		s.add(grow, saw, leak)
		s.add(schema.Metric{TS: at, Name: schema.MetricHeapLive, Value: float64(snap+10) * 1e6, Source: "m"},
			schema.Metric{TS: at, Name: schema.MetricGCCycle, Value: float64(snap * 3), Source: "m"})
		if more != nil {
			more(s, snap, at)
		}
	}
	return s.open()
}

func schemaG(at, goid int64, state string, stack int64, creator string, wait int64) schema.Goroutine {
	return schema.Goroutine{SnapshotTS: at, Goid: goid, State: state, StackID: stack, CreatorFunction: creator, WaitMinutes: wait, CreatorGoid: 1, Source: "d"}
}
