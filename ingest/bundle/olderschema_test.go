package bundle

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/schema"
)

// TestOlderSchemaTables reads spans and trace_goroutines of bundles of
// schema 3 and 4 (testdata/schema3.lsb and schema4.lsb, written by those
// schemas' writers from fixtureSpans and fixtureGoroutines, two batches
// each), adds a row to each, and reads back every value: the tables are
// rewritten in the current stored form. Schema 3 holds the deltas of the
// times as whole int64 columns, schema 4 splits them into high and low
// bits, start_ts among them.
func TestOlderSchemaTables(t *testing.T) {
	for _, c := range []struct{ bundle, has, hasNot string }{
		{"schema3.lsb", "start_ts_delta", "start_ts_delta_low"},
		{"schema4.lsb", "start_ts_delta_low", "start_ts_less_end_ts_low"},
	} {
		t.Run(c.bundle, func(t *testing.T) { testOlderSchema(t, c.bundle, c.has, c.hasNot) })
	}
}

// testOlderSchema is TestOlderSchemaTables of testdata/name, whose spans
// table stores the column has, and not hasNot.
func testOlderSchema(t *testing.T, name, has, hasNot string) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	spansPath, gorPath := tablePath(dir, schema.TableSpans), tablePath(dir, schema.TableTraceGoroutines)
	if got := storedColumns(t, spansPath, mem); !slices.Contains(got, has) || slices.Contains(got, hasNot) {
		t.Fatalf("testdata/%s spans has columns %v: want %s and not %s", name, got, has, hasNot)
	}
	spans, gors := fixtureSpans(), fixtureGoroutines()
	checkSpans(t, dir, mem, spans)
	checkTraceGoroutines(t, dir, mem, gors)
	w, err := Create(dir, Manifest{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	sp := schema.Span{ID: 9, Kind: schema.SpanTask, Name: "t", Goid: 3, TaskID: 9, StartTS: 2e18, EndTS: 2e18 + 70000}
	g := schema.TraceGoroutine{Goid: 1 << 40, CreatedTS: 2e18, EndedTS: 2e18 + 1<<20, StartFunction: "main.f", LastState: "notexist"}
	if err := w.Append(sp); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(g); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, table string }{{spansPath, schema.TableSpans}, {gorPath, schema.TableTraceGoroutines}} {
		if got, want := storedColumns(t, c.path, mem), fieldNames(schema.StoredSchema(c.table)); !slices.Equal(got, want) {
			t.Errorf("rewritten %s has columns %v, want %v", c.table, got, want)
		}
	}
	checkSpans(t, dir, mem, append(spans, sp))
	checkTraceGoroutines(t, dir, mem, append(gors, g))
}

// checkSpans compares the numbers of the spans of the bundle in dir with
// want's.
func checkSpans(t *testing.T, dir string, mem memory.Allocator, want []schema.Span) {
	t.Helper()
	got := readSpans(t, dir, mem)
	if len(got) != len(want) {
		t.Fatalf("read %d spans, want %d", len(got), len(want))
	}
	for i, w := range want {
		if w := [6]int64{w.ID, w.Goid, w.StartTS, w.EndTS, w.TaskID, w.ParentID}; got[i] != w {
			t.Errorf("span %d: id, goid, start, end, task, parent %v, want %v", i, got[i], w)
		}
	}
}

// checkTraceGoroutines compares goid, parent, creation and end of the
// trace goroutines of the bundle in dir with want's (0 for null).
func checkTraceGoroutines(t *testing.T, dir string, mem memory.Allocator, want []schema.TraceGoroutine) {
	t.Helper()
	got := readInts(t, dir, mem, schema.TableTraceGoroutines, schema.TraceGoroutinesSchema,
		schema.ColGoid, schema.ColParentGoid, schema.ColCreatedTS, schema.ColEndedTS)
	if len(got) != len(want) {
		t.Fatalf("read %d trace goroutines, want %d", len(got), len(want))
	}
	for i, w := range want {
		if w := [4]int64{w.Goid, w.ParentGoid, w.CreatedTS, w.EndedTS}; [4]int64(got[i]) != w {
			t.Errorf("trace goroutine %d: goid, parent, created, ended %v, want %v", i, got[i], w)
		}
	}
}

// fixtureSpans are the spans of testdata/schema3.lsb and schema4.lsb: ids, goroutines,
// tasks and times that rise by uneven steps, some null, in two batches.
func fixtureSpans() []schema.Span {
	var out []schema.Span
	ts := int64(1_764_000_000_000_000_000)
	for i := range 300 {
		ts += int64(i%13) * 64 * int64(1+i%5)
		if i == 150 {
			ts += 3 << 40 // a jump past what the low bits hold
		}
		sp := schema.Span{ID: 1<<40 + int64(i), Kind: schema.SpanRegion, Name: fmt.Sprintf("r%d", i%3), Goid: 1000 + int64(i/2),
			TaskID: int64(i/2 + 1), StartTS: ts, EndTS: ts + int64(i)*640 + 64}
		if i%2 == 0 {
			sp.ID, sp.Kind, sp.ParentID = int64(i/2+1), schema.SpanTask, 0
		} else {
			sp.ParentID = sp.TaskID
		}
		if i%7 == 0 {
			sp.StartTS = 0
		}
		if i%11 == 0 {
			sp.EndTS = 0
		}
		if i%17 == 0 {
			sp.TaskID, sp.Goid = 0, 0
		}
		out = append(out, sp)
	}
	return out
}

// fixtureGoroutines are the trace goroutines of testdata/schema3.lsb and
// schema4.lsb.
func fixtureGoroutines() []schema.TraceGoroutine {
	var out []schema.TraceGoroutine
	ts := int64(1_764_000_000_000_000_000)
	for i := range 200 {
		ts += int64(i%9) * 64 * int64(1+i%4)
		g := schema.TraceGoroutine{Goid: 5 + int64(i), ParentGoid: 1 + int64(i/10), CreatedTS: ts, EndedTS: ts + int64(i%50)*6400 + 64,
			StartFunction: fmt.Sprintf("main.worker%d", i%4), LastState: "notexist"}
		if i%6 == 0 {
			g.CreatedTS, g.ParentGoid = 0, 0
		}
		if i%5 == 0 {
			g.EndedTS, g.LastState, g.LastReason = 0, "waiting", "chan receive"
		}
		out = append(out, g)
	}
	return out
}

// FuzzReadSpans reads mutations of spans tables as stored by schemas 3
// and 4 (testdata/schema3.lsb, schema4.lsb) and the current one: the
// decoding of the stored columns must refuse what does not fit, never
// panic.
func FuzzReadSpans(f *testing.F) {
	for _, name := range []string{"schema3.lsb", "schema4.lsb"} {
		old, err := os.ReadFile(filepath.Join("testdata", name, "spans.arrow"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(old)
	}
	dir := filepath.Join(f.TempDir(), "cur.lsb")
	w, err := Create(dir, NewManifest("seed", "fuzz"), memory.DefaultAllocator)
	if err != nil {
		f.Fatal(err)
	}
	for i, sp := range fixtureSpans()[:40] {
		if i == 20 {
			w.Flush()
		}
		w.Append(sp)
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	cur, err := os.ReadFile(tablePath(dir, schema.TableSpans))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(cur)
	fuzzBatches(f, schema.SpansSchema)
}
