package gotrace

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

var update = flag.Bool("update", false, "rewrite the committed fuzz seed corpus")

// progSummary mirrors testdata/prog's Summary.
type progSummary struct {
	Main          int64   `json:"main"`
	ChanLeakers   []int64 `json:"chan_leakers"`
	SelectLeakers []int64 `json:"select_leakers"`
	Enders        []int64 `json:"enders"`
	Spawner       int64   `json:"spawner"`
	Spawned       []int64 `json:"spawned"`
	Window2Leaker int64   `json:"window2_leaker"`
}

// recorded holds the traces testdata/prog wrote in one run.
type recorded struct {
	window1, window2, small string
	sum                     progSummary
}

var (
	recordOnce sync.Once
	recordDir  string
	rec1       recorded
	recordErr  error
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if recordDir != "" {
		os.RemoveAll(recordDir)
	}
	os.Exit(code)
}

// record builds and runs testdata/prog once per test binary. Generations
// are made short (GODEBUG=traceadvanceperiod) so that the trace has many,
// as long-running programs' traces do.
func record(t testing.TB) recorded {
	t.Helper()
	recordOnce.Do(func() {
		recordDir, recordErr = os.MkdirTemp("", "gotrace-test-")
		if recordErr != nil {
			return
		}
		bin := filepath.Join(recordDir, "prog")
		out, err := exec.Command("go", "build", "-o", bin, "./testdata/prog").CombinedOutput()
		if err != nil {
			recordErr = &cmdError{"go build ./testdata/prog", out, err}
			return
		}
		rec1.window1 = filepath.Join(recordDir, "w1.trace")
		rec1.window2 = filepath.Join(recordDir, "w2.trace")
		rec1.small = filepath.Join(recordDir, "small.trace")
		cmd := exec.Command(bin, "-out", rec1.window1, "-out2", rec1.window2)
		cmd.Env = append(os.Environ(), "GODEBUG=traceadvanceperiod=500000")
		out, err = cmd.Output()
		if err != nil {
			recordErr = &cmdError{"testdata/prog", out, err}
			return
		}
		if err := json.Unmarshal(out, &rec1.sum); err != nil {
			recordErr = err
			return
		}
		if out, err := exec.Command(bin, "-small", "-out", rec1.small).CombinedOutput(); err != nil {
			recordErr = &cmdError{"testdata/prog -small", out, err}
		}
	})
	if recordErr != nil {
		t.Fatal(recordErr)
	}
	return rec1
}

type cmdError struct {
	cmd string
	out []byte
	err error
}

func (e *cmdError) Error() string { return e.cmd + ": " + e.err.Error() + "\n" + string(e.out) }

// ingestFiles ingests each file as one trace window into a new bundle and
// returns the bundle's directory and the artifacts.
func ingestFiles(t *testing.T, mem memory.Allocator, opts Options, files ...string) (string, []bundle.Artifact) {
	t.Helper()
	if opts.Mem == nil {
		opts.Mem = mem
	}
	dir := filepath.Join(t.TempDir(), "b.lsb")
	w, err := bundle.Create(dir, bundle.NewManifest("test", "gotrace-test"), mem)
	if err != nil {
		t.Fatal(err)
	}
	var arts []bundle.Artifact
	for _, f := range files {
		// As capture does: keep the original under raw/, then ingest it.
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _, err := w.CopyRaw(filepath.Base(f), fh)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		if fh, err = os.Open(filepath.Join(dir, rel)); err != nil {
			t.Fatal(err)
		}
		a := bundle.Artifact{Name: rel}
		err = Ingest(w, fh, &a, opts)
		fh.Close()
		if err != nil {
			w.Abort()
			t.Fatalf("ingest %s: %v", f, err)
		}
		arts = append(arts, a)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, arts
}

// tables is what a test reads back from a bundle.
type tables struct {
	manifest    bundle.Manifest
	goroutines  []schema.TraceGoroutine
	generations []schema.TraceGeneration
	spans       []schema.Span
	metrics     map[string][]schema.Metric
	clockSync   []schema.ClockSync
	stacks      map[int64][]string // stack id -> functions, leaf first
}

func readTables(t *testing.T, dir string, mem memory.Allocator) *tables {
	t.Helper()
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := &tables{manifest: b.Manifest, metrics: map[string][]schema.Metric{}, stacks: map[int64][]string{}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.ReadTable(schema.TableTraceGoroutines, mem, func(r arrow.Record) error {
		c := cols(r)
		for i := 0; i < int(r.NumRows()); i++ {
			out.goroutines = append(out.goroutines, schema.TraceGoroutine{
				Goid: c.i64(schema.ColGoid, i), ParentGoid: c.i64(schema.ColParentGoid, i),
				CreatedTS: c.ts(schema.ColCreatedTS, i), EndedTS: c.ts(schema.ColEndedTS, i),
				CreationStackID: c.i64(schema.ColCreationStackID, i), StartFunction: c.str(schema.ColStartFunction, i),
				LastState: c.str(schema.ColLastState, i), LastReason: c.str(schema.ColLastReason, i),
				LastStackID: c.i64(schema.ColLastStackID, i),
			})
		}
		return nil
	}))
	gens, err := readGenerations(b, mem)
	must(err)
	out.generations = gens
	if b.Has(schema.TableTraceTransitions) {
		t.Errorf("ingest wrote %s", schema.TableTraceTransitions)
	}
	must(b.ReadTable(schema.TableSpans, mem, func(r arrow.Record) error {
		c := cols(r)
		for i := 0; i < int(r.NumRows()); i++ {
			out.spans = append(out.spans, schema.Span{
				ID: c.i64(schema.ColSpanID, i), ParentID: c.i64(schema.ColParentSpanID, i),
				Kind: c.str(schema.ColKind, i), Name: c.str(schema.ColName, i), Goid: c.i64(schema.ColGoid, i),
				TaskID: c.i64(schema.ColTaskID, i), StartTS: c.ts(schema.ColStartTS, i), EndTS: c.ts(schema.ColEndTS, i),
				Message: c.str(schema.ColMessage, i),
			})
		}
		return nil
	}))
	must(b.ReadTable(schema.TableMetrics, mem, func(r arrow.Record) error {
		c := cols(r)
		for i := 0; i < int(r.NumRows()); i++ {
			m := schema.Metric{TS: c.ts(schema.ColTS, i), Name: c.str(schema.ColName, i),
				Value: r.Column(c.idx[schema.ColValue]).(*array.Float64).Value(i), Source: c.str(schema.ColSource, i)}
			out.metrics[m.Name] = append(out.metrics[m.Name], m)
		}
		return nil
	}))
	must(b.ReadTable(schema.TableClockSync, mem, func(r arrow.Record) error {
		c := cols(r)
		for i := 0; i < int(r.NumRows()); i++ {
			out.clockSync = append(out.clockSync, schema.ClockSync{MonoNS: c.i64(schema.ColMonoNS, i), TS: c.ts(schema.ColTS, i), Source: c.str(schema.ColSource, i)})
		}
		return nil
	}))
	frames := map[int64]string{}
	must(b.Frames(mem, func(f schema.Frame) { frames[f.ID] = f.Function }))
	must(b.Stacks(mem, func(s schema.Stack) {
		for _, id := range s.FrameIDs {
			out.stacks[s.ID] = append(out.stacks[s.ID], frames[id])
		}
	}))
	return out
}

// colReader reads columns by name; null reads as 0 or "".
type colReader struct {
	r   arrow.Record
	idx map[string]int
}

func cols(r arrow.Record) colReader {
	c := colReader{r: r, idx: map[string]int{}}
	for i, f := range r.Schema().Fields() {
		c.idx[f.Name] = i
	}
	return c
}

func (c colReader) col(name string) arrow.Array {
	i, ok := c.idx[name]
	if !ok {
		panic("no column " + name)
	}
	return c.r.Column(i)
}

func (c colReader) i64(name string, i int) int64 {
	a := c.col(name)
	if a.IsNull(i) {
		return 0
	}
	return a.(*array.Int64).Value(i)
}

func (c colReader) ts(name string, i int) int64 {
	a := c.col(name)
	if a.IsNull(i) {
		return 0
	}
	return int64(a.(*array.Timestamp).Value(i))
}

func (c colReader) str(name string, i int) string {
	return bundle.NewStrings(c.col(name)).Value(i)
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}
