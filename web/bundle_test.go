package web

import (
	"bytes"
	"runtime"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/google/pprof/profile"
	"github.com/leakscope/leakscope/dev/bundletest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// leakyWorker blocks forever on a channel nobody sends on: a real
// goroutine leak in the test process.
func leakyWorker(ch chan int, started *sync.WaitGroup) {
	started.Done()
	<-ch
}

// realBundle writes a bundle of this process's real goroutine profiles
// (runtime/pprof, debug=0), taken while it leaks goroutines in three
// steps, and returns the bundle directory and the last profile's total.
// The leaked goroutines are released when the test ends.
func realBundle(t testing.TB, dir string) (string, int64) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	ch := make(chan int)
	t.Cleanup(func() { close(ch) })
	m := bundle.NewManifest("web-test", "web test")
	m.Node = "test-node"
	m.Target.PID = 4242
	m.Target.Exe = "/usr/local/bin/web.test"
	w := bundletest.New(t, dir, m, mem)
	var last int64
	start := time.Now().Add(-3 * time.Minute).UTC()
	for step := range 4 {
		var started sync.WaitGroup
		for range 40 * (step + 1) {
			started.Add(1)
			go leakyWorker(ch, &started)
		}
		started.Wait()
		runtime.Gosched()
		var buf bytes.Buffer
		if err := pprof.Lookup("goroutine").WriteTo(&buf, 0); err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		ts := start.Add(time.Duration(step) * time.Minute)
		last = 0
		for _, s := range p.Sample {
			var frames []bundle.StackFrame
			for _, loc := range s.Location {
				for i := len(loc.Line) - 1; i >= 0; i-- {
					ln := loc.Line[i]
					frames = append(frames, bundle.StackFrame{Function: ln.Function.Name, File: ln.Function.Filename, Line: ln.Line, Inlined: i > 0})
				}
			}
			id := w.Stack(frames...)
			row := schema.Sample{SnapshotTS: ts.UnixNano(), Profile: schema.ProfileGoroutine, StackID: id, Source: "raw/goroutine.pb.gz"}
			row.Values[valueIndex(t, schema.ColCount)] = s.Value[0]
			row.Present = 1 << valueIndex(t, schema.ColCount)
			w.Add(row)
			last += s.Value[0]
		}
		w.Add(schema.Metric{TS: ts.UnixNano(), Name: "goroutines", Value: float64(last), Source: "test"})
		w.W.Update(func(m *bundle.Manifest) { m.Widen(ts); m.Source(bundle.SourcePprof) })
		if step == 3 {
			w.Raw("goroutine.pb.gz", buf.String())
		}
	}
	return w.Close(), last
}

func valueIndex(t testing.TB, col string) int {
	for i, c := range schema.ValueColumns {
		if c == col {
			return i
		}
	}
	t.Fatalf("no value column %s", col)
	return 0
}
