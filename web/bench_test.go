package web

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// millionBundle writes (once, kept in the temp dir) a capture whose last
// goroutine dump holds 1,000,000 goroutines: a leak parked in chan send
// growing over three snapshots beside a steady pool of workers.
func millionBundle(b *testing.B) string {
	dir := filepath.Join(os.TempDir(), "leakscope-web-bench-1m.lsb")
	if _, err := bundle.Open(dir); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	w, err := bundle.Create(dir, bundle.NewManifest("bench-1m", "web bench"), memory.DefaultAllocator)
	if err != nil {
		b.Fatal(err)
	}
	leak, _ := w.StackID([]bundle.StackFrame{
		{Function: "runtime.gopark", File: "runtime/proc.go", Line: 435},
		{Function: "runtime.chansend", File: "runtime/chan.go", Line: 283},
		{Function: "main.(*Fetcher).send", File: "/src/fetch.go", Line: 41},
		{Function: "main.(*Fetcher).run", File: "/src/fetch.go", Line: 30},
	})
	var pool []int64
	for i := range 40 {
		id, _ := w.StackID([]bundle.StackFrame{
			{Function: "runtime.gopark", File: "runtime/proc.go", Line: 435},
			{Function: "runtime.selectgo", File: "runtime/select.go", Line: 351},
			{Function: fmt.Sprintf("main.worker%d", i), File: "/src/pool.go", Line: int64(10 + i)},
		})
		pool = append(pool, id)
	}
	creator, _ := w.StackID([]bundle.StackFrame{{Function: "main.(*Fetcher).Start", File: "/src/fetch.go", Line: 20}})
	start := time.Now().Add(-10 * time.Minute)
	for snap, leaked := range []int{200_000, 500_000, 999_000} {
		ts := start.Add(time.Duration(snap) * 3 * time.Minute).UnixNano()
		goid := int64(1)
		for i := range 1000 {
			w.Append(schema.Goroutine{SnapshotTS: ts, Goid: goid, State: "select", StackID: pool[i%len(pool)], CreatorGoid: 1, CreatorFunction: "main.main"})
			goid++
		}
		for range leaked {
			w.Append(schema.Goroutine{SnapshotTS: ts, Goid: goid, State: "chan send", WaitMinutes: int64(snap * 3), StackID: leak, CreatorGoid: 1, CreatorFunction: "main.(*Fetcher).Start", CreatorStackID: creator})
			goid++
		}
		w.Append(schema.Metric{TS: ts, Name: "goroutines", Value: float64(1000 + leaked)})
		w.Update(func(m *bundle.Manifest) { m.Widen(time.Unix(0, ts)); m.Source(bundle.SourceDump) })
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkMillion measures the overview (report JSON) and flame-graph
// JSON answers for a capture of 1,000,000 goroutines once it is loaded
// (the target is under 200 ms), and, for reference, computing them cold.
func BenchmarkMillion(b *testing.B) {
	dir := millionBundle(b)
	bd, err := bundle.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	s := &Store{dir: filepath.Dir(dir), mem: memory.DefaultAllocator, caps: map[string]*capture{}}
	s.caps["m"] = newCapture("m", bd, s)
	h := NewRouter(s, Options{Loopback: true})
	get := func(b *testing.B, path string) {
		rec := do(b, h, "GET", path, nil, nil)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
	// Load: the first answers compute and cache.
	t0 := time.Now()
	get(b, "/api/captures/m/report")
	b.Logf("first overview (analysis of 1.7M goroutine rows): %v", time.Since(t0))
	t0 = time.Now()
	get(b, "/api/captures/m/flamegraph?source=goroutines")
	b.Logf("first flame graph: %v", time.Since(t0))

	b.Run("overview", func(b *testing.B) {
		for b.Loop() {
			get(b, "/api/captures/m/report")
		}
	})
	b.Run("flamegraph", func(b *testing.B) {
		for b.Loop() {
			get(b, "/api/captures/m/flamegraph?source=goroutines")
		}
	})
	b.Run("flamegraph-new-query", func(b *testing.B) {
		// Each query differs, so it is built from the bundle (stacks
		// already loaded): the cost of a new focus, snapshot or diff.
		i := 0
		for b.Loop() {
			i++
			get(b, fmt.Sprintf("/api/captures/m/flamegraph?source=goroutines&ignore=worker%d$", i))
		}
	})
}
