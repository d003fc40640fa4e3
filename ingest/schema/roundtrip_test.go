package schema

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// rowTypes holds one value of every Row type; TestEveryTableHasARow
// checks that it covers every table.
var rowTypes = []Row{
	Frame{}, Stack{}, Sample{}, Goroutine{}, TraceGoroutine{}, Transition{},
	Span{}, Metric{}, EBPFEvent{}, ClockSync{}, Race{}, SourceCode{}, SourceCall{}, SourceFile{},
	TraceGeneration{}, ProbeWindow{},
}

func TestEveryTableHasARow(t *testing.T) {
	var tables []string
	for _, r := range rowTypes {
		tables = append(tables, r.Table())
	}
	sort.Strings(tables)
	var want []string
	for name := range Schemas {
		want = append(want, name)
	}
	sort.Strings(want)
	if !slices.Equal(tables, want) {
		t.Fatalf("row types cover tables %v, schemas are %v", tables, want)
	}
	names := slices.Clone(TableNames)
	sort.Strings(names)
	if !slices.Equal(names, want) {
		t.Fatalf("TableNames %v, schemas %v", names, want)
	}
}

func TestSchemasWellFormed(t *testing.T) {
	for name, sc := range Schemas {
		if got := TableOf(sc); got != name {
			t.Errorf("%s: TableOf says %q", name, got)
		}
		seen := map[string]bool{}
		addedSeen := false
		for _, f := range sc.Fields() {
			if seen[f.Name] {
				t.Errorf("%s: column %s twice", name, f.Name)
			}
			seen[f.Name] = true
			if Removed(name, f.Name) {
				t.Errorf("%s: column %s is both present and removed", name, f.Name)
			}
			if Added(f) {
				addedSeen = true
			} else if addedSeen {
				t.Errorf("%s: column %s follows an added column but is not marked added (columns are only added at the end)", name, f.Name)
			}
		}
	}
}

// TestRowRoundTrip fills every field of every row type with a distinct
// value, appends it, writes the record as a zstd-compressed IPC stream,
// reads it back and checks that each value came back in some column: a
// field AppendTo forgets, or a column it fills twice, fails here.
func TestRowRoundTrip(t *testing.T) {
	for _, proto := range rowTypes {
		t.Run(proto.Table(), func(t *testing.T) {
			row, want := filled(proto)
			got := roundTrip(t, row)
			for _, v := range want {
				if !got[v] {
					t.Errorf("value %s of %T not found after the round trip (have %v)", v, row, keys(got))
				}
			}
		})
	}
}

// TestZeroRowRoundTrip checks that the zero row (nulls for absent ids
// and times) is accepted by every schema: a null written into a
// non-nullable column is refused by the check in roundTrip.
func TestZeroRowRoundTrip(t *testing.T) {
	for _, proto := range rowTypes {
		t.Run(proto.Table(), func(t *testing.T) { roundTrip(t, proto) })
	}
}

// filled returns a copy of proto with every field set to a distinct
// value, and those values as the text roundTrip reports them in.
func filled(proto Row) (Row, []string) {
	v := reflect.New(reflect.TypeOf(proto)).Elem()
	var want []string
	n := int64(1000)
	var fill func(f reflect.Value, name string)
	fill = func(f reflect.Value, name string) {
		switch f.Kind() {
		case reflect.String:
			f.SetString("v-" + name)
			want = append(want, "v-"+name)
		case reflect.Int64, reflect.Int32, reflect.Int:
			n += 7
			f.SetInt(n)
			want = append(want, fmt.Sprint(n))
		case reflect.Uint16:
			f.SetUint(1<<NumValues - 1) // Sample.Present: every value column
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			s := reflect.MakeSlice(f.Type(), 2, 2)
			for i := 0; i < 2; i++ {
				fill(s.Index(i), fmt.Sprintf("%s.%d", name, i))
			}
			f.Set(s)
		case reflect.Array:
			for i := 0; i < f.Len(); i++ {
				fill(f.Index(i), fmt.Sprintf("%s.%d", name, i))
			}
		}
	}
	for i := 0; i < v.NumField(); i++ {
		fill(v.Field(i), v.Type().Field(i).Name)
	}
	return v.Interface().(Row), want
}

// roundTrip writes row into a record of its table's schema, through an
// IPC stream and back, and returns every non-null leaf value it read.
func roundTrip(t *testing.T, row Row) map[string]bool {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	sc := Schemas[row.Table()]
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	row.AppendTo(b)
	for i := 0; i < b.Schema().NumFields(); i++ {
		if n := b.Field(i).Len(); n != 1 {
			t.Fatalf("%T: column %s has %d values after one row", row, sc.Field(i).Name, n)
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	for i := 0; i < int(rec.NumCols()); i++ {
		v, ok := rec.Column(i).(interface{ ValidateFull() error })
		if !ok {
			continue
		}
		if err := v.ValidateFull(); err != nil {
			t.Fatalf("%T: invalid column %s: %v", row, sc.Field(i).Name, err)
		}
	}
	for i, f := range sc.Fields() {
		if !f.Nullable && rec.Column(i).NullN() > 0 {
			t.Errorf("%T: null in non-nullable column %s", row, f.Name)
		}
	}
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(sc), ipc.WithAllocator(mem), ipc.WithZstd())
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := ipc.NewReader(&buf, ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if !r.Next() {
		t.Fatalf("%T: no record read back: %v", row, r.Err())
	}
	back := r.Record()
	if !r.Schema().Equal(sc) {
		t.Errorf("%T: schema read back differs:\n%v\nwant\n%v", row, r.Schema(), sc)
	}
	if !array.RecordEqual(back, rec) {
		t.Errorf("%T: record read back differs", row)
	}
	got := map[string]bool{}
	for i := 0; i < int(back.NumCols()); i++ {
		leaves(back.Column(i), got)
	}
	return got
}

// leaves adds the text of every non-null scalar of a to out.
func leaves(a arrow.Array, out map[string]bool) {
	switch a := a.(type) {
	case *array.List:
		leaves(a.ListValues(), out)
	case *array.Dictionary:
		for i := 0; i < a.Len(); i++ {
			if a.IsValid(i) {
				out[a.Dictionary().ValueStr(a.GetValueIndex(i))] = true
			}
		}
	case *array.Timestamp:
		for i := 0; i < a.Len(); i++ {
			if a.IsValid(i) {
				out[fmt.Sprint(int64(a.Value(i)))] = true
			}
		}
	default:
		for i := 0; i < a.Len(); i++ {
			if a.IsValid(i) {
				out[a.ValueStr(i)] = true
			}
		}
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
