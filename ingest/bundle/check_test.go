package bundle

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"

	"encoding/binary"
	"github.com/leakscope/leakscope/ingest/schema"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

func int32Buf(vs ...int32) *memory.Buffer {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	return memory.NewBufferBytes(b)
}

func int64Buf(vs ...int64) *memory.Buffer {
	b := make([]byte, 8*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	}
	return memory.NewBufferBytes(b)
}

// TestCheckData feeds arrays whose lengths contradict their buffers, as a
// hand-made table file can, and checks each is refused with a reason.
func TestCheckData(t *testing.T) {
	str := arrow.BinaryTypes.String
	i64 := arrow.PrimitiveTypes.Int64
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: str}
	dictVals := array.NewData(str, 2, []*memory.Buffer{nil, int32Buf(0, 1, 2), memory.NewBufferBytes([]byte("ab"))}, nil, 0, 0)
	child := array.NewData(i64, 2, []*memory.Buffer{nil, int64Buf(1, 2)}, nil, 0, 0)
	for _, tc := range []struct {
		name string
		data arrow.ArrayData
		want string // "" for valid
	}{
		{"good string", array.NewData(str, 2, []*memory.Buffer{nil, int32Buf(0, 1, 2), memory.NewBufferBytes([]byte("ab"))}, nil, 0, 0), ""},
		{"offset past data", array.NewData(str, 2, []*memory.Buffer{nil, int32Buf(0, 1, 1000), memory.NewBufferBytes([]byte("ab"))}, nil, 0, 0), "past the end"},
		{"offsets backwards", array.NewData(str, 2, []*memory.Buffer{nil, int32Buf(0, 2, 1), memory.NewBufferBytes([]byte("ab"))}, nil, 0, 0), "before offset"},
		{"negative offset", array.NewData(str, 1, []*memory.Buffer{nil, int32Buf(-4, 1), memory.NewBufferBytes([]byte("ab"))}, nil, 0, 0), "negative"},
		{"short offsets", array.NewData(str, 5, []*memory.Buffer{nil, int32Buf(0, 1), memory.NewBufferBytes([]byte("ab"))}, nil, 0, 0), "offsets"},
		{"short values", array.NewData(i64, 1000, []*memory.Buffer{nil, int64Buf(1, 2)}, nil, 0, 0), "1000 rows need 8000"},
		{"short bitmap", array.NewData(i64, 100, []*memory.Buffer{memory.NewBufferBytes([]byte{1}), int64Buf(make([]int64, 100)...)}, nil, 3, 0), "validity bitmap"},
		{"list past child", array.NewData(arrow.ListOf(i64), 1, []*memory.Buffer{nil, int32Buf(0, 9)}, []arrow.ArrayData{child}, 0, 0), "past the end of its values"},
		{"good list", array.NewData(arrow.ListOf(i64), 1, []*memory.Buffer{nil, int32Buf(0, 2)}, []arrow.ArrayData{child}, 0, 0), ""},
		{"index outside dictionary", array.NewDataWithDictionary(dictType, 2, []*memory.Buffer{nil, int32Buf(0, 7)}, 0, 0, dictVals), "outside a dictionary of 2"},
		{"good dictionary", array.NewDataWithDictionary(dictType, 2, []*memory.Buffer{nil, int32Buf(1, 0)}, 0, 0, dictVals), ""},
	} {
		err := checkData(tc.data)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

// FuzzReadTable feeds arbitrary bytes to the table reader as a goroutines
// table: it must never panic, hand a reader only batches that pass the
// checks, end with nil, a PartialError or a CorruptError, and after a
// clean read hold no memory.
func FuzzReadTable(f *testing.F) {
	dir := f.TempDir()
	w, err := Create(filepath.Join(dir, "seed.lsb"), NewManifest("seed", "fuzz"), memory.DefaultAllocator)
	if err != nil {
		f.Fatal(err)
	}
	sid, _ := w.StackID([]StackFrame{{Function: "main.f", File: "/x.go", Line: 1}})
	for i := range 20 {
		w.Append(schema.Goroutine{SnapshotTS: 1, Goid: int64(i), State: "chan send", StackID: sid, Labels: "a=b", Source: "raw/x"})
		if i%7 == 0 {
			w.Flush()
		}
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	for _, table := range []string{schema.TableGoroutines, schema.TableFrames, schema.TableStacks} {
		data, err := os.ReadFile(tablePath(w.Dir(), table))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	fuzzBatches(f, schema.GoroutinesSchema)
}

// fuzzBatches fuzzes readBatches with stored tables of schema sc: every
// value of what it reads is touched, as readers do, a failure is a
// PartialError or CorruptError, and a clean read gives back all it
// allocated.
func fuzzBatches(f *testing.F, sc *arrow.Schema) {
	old := MaxBatchBytes
	MaxBatchBytes = 8 << 20
	defer func() { MaxBatchBytes = old }()
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		err := readBatches(bytes.NewReader(data), int64(len(data)), "fuzz.arrow", sc, mem, func(rec arrow.Record) error {
			for i := range rec.Columns() {
				col := rec.Column(i)
				for j := 0; j < col.Len(); j++ {
					col.ValueStr(j) // touches every value, as readers do
				}
			}
			return nil
		})
		var pe *PartialError
		var ce *CorruptError
		if err != nil && !errors.As(err, &pe) && !errors.As(err, &ce) {
			t.Fatalf("error of type %T: %v", err, err)
		}
		if err == nil {
			// Arrow's reader drops buffers it allocated before a panic on
			// corrupt input (the Go allocator's GC reclaims them), so only
			// a clean read must give everything back.
			mem.AssertSize(t, 0)
		}
	})
}
