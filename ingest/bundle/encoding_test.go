package bundle

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/schema"
)

// TestDeltaColumns writes spans whose ids and times rise, fall, wrap and
// are null, with parents and tasks null or not, by rows and as a sliced
// record batch, and reads back the very values; the file stores the
// encoded columns under their stored names.
func TestDeltaColumns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := filepath.Join(t.TempDir(), "d.lsb")
	w, err := Create(dir, NewManifest("d", "test"), mem)
	if err != nil {
		t.Fatal(err)
	}
	starts := []int64{5, 0, 1 << 62, -(1 << 62), 7, 1<<63 - 1, -1 << 63, 0, -1, 3} // -1: no end
	var want []schema.Span
	for i, s := range starts {
		sp := schema.Span{ID: int64(len(starts) - i), Kind: schema.SpanRegion, Name: "r", Goid: s / 3, StartTS: s, EndTS: s + 1,
			TaskID: int64(i % 3), ParentID: int64(i%2) * (s + 9)}
		if err := w.Append(sp); err != nil {
			t.Fatal(err)
		}
		want = append(want, sp)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	// A batch that starts at an offset into its arrays.
	b := array.NewRecordBuilder(mem, schema.SpansSchema)
	for _, sp := range want {
		sp.AppendTo(b)
	}
	rec := b.NewRecord()
	b.Release()
	sliced := rec.NewSlice(3, 9)
	if err := w.WriteRecord(schema.TableSpans, sliced); err != nil {
		t.Fatal(err)
	}
	sliced.Release()
	rec.Release()
	want = append(want, want[3:9]...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	stored := storedColumns(t, tablePath(dir, schema.TableSpans), mem)
	for _, c := range []string{"start_ts_less_end_ts_high", "start_ts_less_end_ts_low", "end_ts_delta_high", "end_ts_delta_low"} {
		if !slices.Contains(stored, c) {
			t.Errorf("stored columns %v, want %s", stored, c)
		}
	}
	if slices.Contains(stored, schema.ColStartTS) || slices.Contains(stored, schema.ColEndTS) {
		t.Errorf("stored columns %v hold start_ts or end_ts as they are", stored)
	}
	checkSpans(t, dir, mem, want)
}

// readSpans returns id, goid, start, end, task and parent of every span
// (0 for null), with the schema readers see.
func readSpans(t *testing.T, dir string, mem memory.Allocator) [][6]int64 {
	t.Helper()
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out [][6]int64
	err = b.ReadTable(schema.TableSpans, mem, func(rec arrow.Record) error {
		if got, want := fieldNames(rec.Schema()), fieldNames(schema.SpansSchema); !slices.Equal(got, want) {
			t.Fatalf("read columns %v, want %v", got, want)
		}
		col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
		id, goid := col(schema.ColSpanID).(*array.Int64), col(schema.ColGoid).(*array.Int64)
		start, end := col(schema.ColStartTS).(*array.Timestamp), col(schema.ColEndTS).(*array.Timestamp)
		task, parent := col(schema.ColTaskID).(*array.Int64), col(schema.ColParentSpanID).(*array.Int64)
		for i := 0; i < int(rec.NumRows()); i++ {
			var r [6]int64
			if id.IsValid(i) {
				r[0] = id.Value(i)
			}
			if goid.IsValid(i) {
				r[1] = goid.Value(i)
			}
			if start.IsValid(i) {
				r[2] = int64(start.Value(i))
			}
			if end.IsValid(i) {
				r[3] = int64(end.Value(i))
			}
			if task.IsValid(i) {
				r[4] = task.Value(i)
			}
			if parent.IsValid(i) {
				r[5] = parent.Value(i)
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
