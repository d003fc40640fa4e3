package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/schema"
)

// TestSchema3Tables reads spans and trace_goroutines of a schema-3 bundle
// (testdata/schema3.lsb, written by the schema-3 writer from
// fixtureSpans and fixtureGoroutines, two batches each), where the
// deltas of the times are whole int64 columns, adds a row to each, and
// reads back every value: the tables are rewritten in the current stored
// form, their times split into high and low bits.
func TestSchema3Tables(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := filepath.Join(t.TempDir(), "s3.lsb")
	if err := os.CopyFS(dir, os.DirFS("testdata/schema3.lsb")); err != nil {
		t.Fatal(err)
	}
	spansPath, gorPath := tablePath(dir, schema.TableSpans), tablePath(dir, schema.TableTraceGoroutines)
	if got := storedColumns(t, spansPath, mem); !slices.Contains(got, "start_ts_delta") || slices.Contains(got, "start_ts_delta_low") {
		t.Fatalf("testdata spans has columns %v: not a schema-3 table", got)
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
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got [][4]int64
	err = b.ReadTable(schema.TableTraceGoroutines, mem, func(rec arrow.Record) error {
		if got, want := fieldNames(rec.Schema()), fieldNames(schema.TraceGoroutinesSchema); !slices.Equal(got, want) {
			t.Fatalf("read columns %v, want %v", got, want)
		}
		col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
		goid, parent := col(schema.ColGoid).(*array.Int64), col(schema.ColParentGoid).(*array.Int64)
		created, ended := col(schema.ColCreatedTS).(*array.Timestamp), col(schema.ColEndedTS).(*array.Timestamp)
		for i := range int(rec.NumRows()) {
			r := [4]int64{goid.Value(i)}
			if parent.IsValid(i) {
				r[1] = parent.Value(i)
			}
			if created.IsValid(i) {
				r[2] = int64(created.Value(i))
			}
			if ended.IsValid(i) {
				r[3] = int64(ended.Value(i))
			}
			got = append(got, r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d trace goroutines, want %d", len(got), len(want))
	}
	for i, w := range want {
		if w := [4]int64{w.Goid, w.ParentGoid, w.CreatedTS, w.EndedTS}; got[i] != w {
			t.Errorf("trace goroutine %d: goid, parent, created, ended %v, want %v", i, got[i], w)
		}
	}
}

// fixtureSpans are the spans of testdata/schema3.lsb: ids, goroutines,
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

// fixtureGoroutines are the trace goroutines of testdata/schema3.lsb.
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

// FuzzReadSpans reads mutations of spans tables as stored by schema 3
// (testdata/schema3.lsb) and schema 4: the decoding of the stored columns
// must refuse what does not fit, never panic.
func FuzzReadSpans(f *testing.F) {
	old, err := os.ReadFile(filepath.Join("testdata", "schema3.lsb", "spans.arrow"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(old)
	dir := filepath.Join(f.TempDir(), "s4.lsb")
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
	oldMax := MaxBatchBytes
	MaxBatchBytes = 8 << 20
	defer func() { MaxBatchBytes = oldMax }()
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		err := readBatches(bytes.NewReader(data), int64(len(data)), "fuzz.arrow", schema.SpansSchema, mem, func(rec arrow.Record) error {
			for i := range rec.Columns() {
				col := rec.Column(i)
				for j := 0; j < col.Len(); j++ {
					col.ValueStr(j)
				}
			}
			return nil
		})
		var pe *PartialError
		var ce *CorruptError
		if err != nil && !errors.As(err, &pe) && !errors.As(err, &ce) {
			t.Fatalf("error of type %T: %v", err, err)
		}
	})
}
