package bundle

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/schema"
)

// PartialError reports a table file whose tail could not be read (a writer
// killed mid-batch). Every batch before ValidBatches was delivered.
type PartialError struct {
	Path         string
	ValidBatches int
	ValidRows    int64
	Err          error
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("%s: truncated after %d complete batches (%d rows): %v", e.Path, e.ValidBatches, e.ValidRows, e.Err)
}

func (e *PartialError) Unwrap() error { return e.Err }

// Bundle is a bundle opened for reading. It is safe for concurrent use:
// every read opens its own file handles.
type Bundle struct {
	Dir      string
	Manifest Manifest
}

// Open opens the bundle in dir for reading, first finishing or removing
// what an interrupted addition left (see [Recover]).
func Open(dir string) (*Bundle, error) {
	if err := Recover(dir); err != nil {
		return nil, err
	}
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	return &Bundle{Dir: dir, Manifest: m}, nil
}

// Has reports whether the bundle holds the table.
func (b *Bundle) Has(table string) bool {
	_, err := os.Stat(tablePath(b.Dir, table))
	return err == nil
}

// ReadTable calls fn with each record batch of the table, in order. The
// record is only valid during the call. A missing table yields no batches
// and no error. A table cut short yields its complete batches, then a
// [*PartialError]; a table that is not well-formed (lengths past its end
// or over [MaxBatchBytes], columns other than the schema's, buffers too
// short for their rows) yields its good batches, then a [*CorruptError].
func (b *Bundle) ReadTable(table string, mem memory.Allocator, fn func(arrow.Record) error) error {
	want, ok := schema.Schemas[table]
	if !ok {
		return fmt.Errorf("unknown table %q", table)
	}
	err := readStream(tablePath(b.Dir, table), want, mem, fn)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// readStream reads an Arrow IPC stream file batch by batch, checking every
// length against the file's size and [MaxBatchBytes] before allocating,
// its schema against want and each batch's buffers against its rows.
func readStream(path string, want *arrow.Schema, mem memory.Allocator, fn func(arrow.Record) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	return readBatches(f, st.Size(), path, want, mem, fn)
}

// readBatches is readStream for size bytes of r, named path in errors.
func readBatches(r io.Reader, size int64, path string, want *arrow.Schema, mem memory.Allocator, fn func(arrow.Record) error) error {
	bud := newBudget(mem, MaxBatchBytes)
	msgs := newMessages(r, size, bud)
	var batches int
	var rows int64
	fail := func(err error) error {
		if msgs.short && msgs.corrupt == nil {
			return &PartialError{Path: path, ValidBatches: batches, ValidRows: rows, Err: err}
		}
		if ferr := bud.failure(); ferr != nil {
			err = ferr
		}
		return &CorruptError{Path: path, Offset: msgs.at, ValidBatches: batches, Err: err}
	}
	rd, err := ipc.NewReaderFromMessageReader(msgs, ipc.WithAllocator(bud))
	if err != nil {
		if errors.Is(err, io.EOF) && !msgs.short && msgs.corrupt == nil {
			// An empty file: a writer killed before its first flush.
			return &PartialError{Path: path, Err: io.ErrUnexpectedEOF}
		}
		return fail(fmt.Errorf("read schema: %w", err))
	}
	defer rd.Release()
	var rm remover
	var dc *deltaCodec
	if want != nil {
		var got *arrow.Schema
		dc, got = newDecoder(rd.Schema(), schema.TableOf(want))
		if err := checkSchema(got, want); err != nil {
			msgs.corrupt = err
			return fail(fmt.Errorf("columns are not the table's: %w", err))
		}
		rm = newRemover(got, schema.TableOf(want))
	}
	ra := startReadAhead(rd, dc, msgs)
	defer ra.stop()
	for {
		rec, err := ra.next()
		if err != nil {
			return fail(err)
		}
		if rec == nil {
			return nil
		}
		n := rec.NumRows()
		err = rm.call(rec, fn)
		rec.Release()
		if err != nil {
			return err
		}
		batches++
		rows += n
	}
}

// TableInfo summarises one table file.
type TableInfo struct {
	Name      string `json:"name"`
	Rows      int64  `json:"rows"`
	Batches   int    `json:"batches"`
	Bytes     int64  `json:"bytes"`
	Truncated string `json:"truncated,omitempty"`
}

// Tables lists the tables present in the bundle with their row counts.
func (b *Bundle) Tables(mem memory.Allocator) ([]TableInfo, error) {
	var out []TableInfo
	for _, name := range schema.TableNames {
		st, err := os.Stat(tablePath(b.Dir, name))
		if err != nil {
			continue
		}
		ti := TableInfo{Name: name, Bytes: st.Size()}
		err = b.ReadTable(name, mem, func(rec arrow.Record) error {
			ti.Rows += rec.NumRows()
			ti.Batches++
			return nil
		})
		var pe *PartialError
		if errors.As(err, &pe) {
			ti.Truncated = pe.Err.Error()
		} else if err != nil {
			return nil, err
		}
		out = append(out, ti)
	}
	return out, nil
}

// RawFiles lists the original artifacts kept under raw/ that the
// manifest lists, sorted by name. A file the manifest does not list (a
// capture killed while it downloaded the file) is no original.
func (b *Bundle) RawFiles() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(b.Dir, RawDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	listed := b.Manifest.rawNames()
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && listed[e.Name()] {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// Frames calls fn for every row of the frames table.
func (b *Bundle) Frames(mem memory.Allocator, fn func(schema.Frame)) error {
	return Tolerate(b.ReadTable(schema.TableFrames, mem, func(rec arrow.Record) error {
		ids := rec.Column(0).(*array.Int64)
		fns := NewStrings(rec.Column(1))
		files := NewStrings(rec.Column(2))
		lines := rec.Column(3).(*array.Int64)
		inl := rec.Column(4).(*array.Boolean)
		for i := 0; i < int(rec.NumRows()); i++ {
			fn(schema.Frame{ID: ids.Value(i), Function: fns.Value(i), File: files.Value(i), Line: lines.Value(i), Inlined: inl.Value(i)})
		}
		return nil
	}))
}

// Stacks calls fn for every row of the stacks table. The FrameIDs slice is
// freshly allocated for each stack.
func (b *Bundle) Stacks(mem memory.Allocator, fn func(schema.Stack)) error {
	return Tolerate(b.ReadTable(schema.TableStacks, mem, func(rec arrow.Record) error {
		ids := rec.Column(0).(*array.Int64)
		lists := rec.Column(1).(*array.List)
		vals := lists.ListValues().(*array.Int64)
		for i := 0; i < int(rec.NumRows()); i++ {
			start, end := lists.ValueOffsets(i)
			fids := make([]int64, end-start)
			for j := start; j < end; j++ {
				fids[j-start] = vals.Value(int(j))
			}
			fn(schema.Stack{ID: ids.Value(i), FrameIDs: fids})
		}
		return nil
	}))
}

// Tolerate turns the [*PartialError] of a table cut short into success:
// its complete batches were already delivered. Other errors pass through.
func Tolerate(err error) error {
	var pe *PartialError
	if errors.As(err, &pe) {
		return nil
	}
	return err
}

// Strings reads a string column that may be dictionary-encoded.
type Strings struct {
	plain *array.String
	dict  *array.Dictionary
	vals  *array.String
}

// NewStrings wraps a string or dictionary-of-string column.
func NewStrings(a arrow.Array) Strings {
	switch c := a.(type) {
	case *array.String:
		return Strings{plain: c}
	case *array.Dictionary:
		return Strings{dict: c, vals: c.Dictionary().(*array.String)}
	}
	panic(fmt.Sprintf("bundle: column of type %s is not a string column", a.DataType()))
}

// Value returns the string at row i ("" for null).
func (s Strings) Value(i int) string {
	if s.plain != nil {
		return s.plain.Value(i)
	}
	if s.dict.IsNull(i) {
		return ""
	}
	return s.vals.Value(s.dict.GetValueIndex(i))
}
