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
	var out [][6]int64
	for _, r := range readInts(t, dir, mem, schema.TableSpans, schema.SpansSchema,
		schema.ColSpanID, schema.ColGoid, schema.ColStartTS, schema.ColEndTS, schema.ColTaskID, schema.ColParentSpanID) {
		out = append(out, [6]int64(r))
	}
	return out
}

// readInts returns the named int64 or timestamp columns of every row of
// table in the bundle in dir (0 for null), after checking that readers
// see the columns of sc.
func readInts(t *testing.T, dir string, mem memory.Allocator, table string, sc *arrow.Schema, cols ...string) [][]int64 {
	t.Helper()
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]int64
	err = b.ReadTable(table, mem, func(rec arrow.Record) error {
		if got, want := fieldNames(rec.Schema()), fieldNames(sc); !slices.Equal(got, want) {
			t.Fatalf("read columns %v, want %v", got, want)
		}
		arrs := make([]arrow.Array, len(cols))
		for j, name := range cols {
			arrs[j] = rec.Column(rec.Schema().FieldIndices(name)[0])
		}
		for i := range int(rec.NumRows()) {
			r := make([]int64, len(cols))
			for j, a := range arrs {
				if !a.IsValid(i) {
					continue
				}
				switch a := a.(type) {
				case *array.Int64:
					r[j] = a.Value(i)
				case *array.Timestamp:
					r[j] = int64(a.Value(i))
				default:
					t.Fatalf("%s column %s is %s, want int64 or timestamp", table, cols[j], a.DataType())
				}
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
