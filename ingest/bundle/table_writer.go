package bundle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/schema"
)

// batchRows is the number of buffered rows that triggers a batch write
// before the once-a-second flush.
const batchRows = 64 * 1024

// tableWriter appends rows of one table to TABLE.arrow (or to
// TABLE.arrow.tmp when the bundle already had that table).
type tableWriter struct {
	name    string
	path    string // final path
	tmpPath string // non-empty when writing a copy that replaces path on close
	f       *os.File
	w       *ipc.Writer
	b       *array.RecordBuilder
	pending int
	rows    int64
	schema  *arrow.Schema
	mem     memory.Allocator
}

func tablePath(dir, table string) string { return filepath.Join(dir, table+".arrow") }

func newTableWriter(dir, table string, mem memory.Allocator) (*tableWriter, error) {
	sc, ok := schema.Schemas[table]
	if !ok {
		return nil, fmt.Errorf("unknown table %q", table)
	}
	tw := &tableWriter{name: table, path: tablePath(dir, table), schema: sc, mem: mem}
	target := tw.path
	_, statErr := os.Stat(tw.path)
	exists := statErr == nil
	if exists {
		tw.tmpPath = tw.path + ".tmp"
		target = tw.tmpPath
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", table, err)
	}
	tw.f = f
	tw.w = ipc.NewWriter(f, ipc.WithSchema(sc), ipc.WithZstd(), ipc.WithAllocator(mem))
	tw.b = array.NewRecordBuilder(mem, sc)
	if exists {
		n, err := copyTable(tw.path, tw.w, sc, mem)
		tw.rows = n
		if err != nil && !errors.As(err, new(*PartialError)) {
			tw.abort()
			return nil, fmt.Errorf("copy existing table %s: %w", table, err)
		}
	}
	return tw, nil
}

// copyTable writes every readable batch of the stream at path to w,
// widened to the current schema sc when the stream predates columns added
// since.
func copyTable(path string, w *ipc.Writer, sc *arrow.Schema, mem memory.Allocator) (int64, error) {
	var rows int64
	err := readStream(path, sc, mem, func(rec arrow.Record) error {
		rows += rec.NumRows()
		return writeWidened(w, rec, sc, mem)
	})
	return rows, err
}

// writeWidened writes rec to w, widened to sc when rec predates columns
// added since.
func writeWidened(w *ipc.Writer, rec arrow.Record, sc *arrow.Schema, mem memory.Allocator) error {
	if int(rec.NumCols()) >= sc.NumFields() {
		return w.Write(rec)
	}
	wide, err := widen(rec, sc, mem)
	if err != nil {
		return err
	}
	defer wide.Release()
	return w.Write(wide)
}

// widen returns rec with the columns of sc it lacks appended as nulls.
// Only columns added later ([schema.Added]) may be missing.
func widen(rec arrow.Record, sc *arrow.Schema, mem memory.Allocator) (arrow.Record, error) {
	if err := checkSchema(rec.Schema(), sc); err != nil {
		return nil, err
	}
	cols := append([]arrow.Array(nil), rec.Columns()...)
	n := int(rec.NumRows())
	var made []arrow.Array
	for i := len(cols); i < sc.NumFields(); i++ {
		a := array.MakeArrayOfNull(mem, sc.Field(i).Type, n)
		made = append(made, a)
		cols = append(cols, a)
	}
	out := array.NewRecord(sc, cols, rec.NumRows())
	for _, a := range made {
		a.Release()
	}
	return out, nil
}

func (tw *tableWriter) append(r schema.Row) {
	r.AppendTo(tw.b)
	tw.pending++
	tw.rows++
}

// flush writes the buffered rows as one record batch.
func (tw *tableWriter) flush() error {
	if tw.pending == 0 {
		return nil
	}
	rec := tw.b.NewRecord()
	defer rec.Release()
	tw.pending = 0
	if err := tw.w.Write(rec); err != nil {
		return fmt.Errorf("write table %s: %w", tw.name, err)
	}
	return nil
}

// close flushes, ends the stream and, for a copy, renames it into place.
func (tw *tableWriter) close() error {
	err := tw.flush()
	if cerr := tw.w.Close(); err == nil {
		err = cerr
	}
	if cerr := tw.f.Close(); err == nil {
		err = cerr
	}
	tw.b.Release()
	if err != nil {
		if tw.tmpPath != "" {
			os.Remove(tw.tmpPath)
		}
		return err
	}
	if tw.tmpPath != "" {
		return os.Rename(tw.tmpPath, tw.path)
	}
	return nil
}

// abort drops what this writer wrote: a copy is removed, the original stays.
func (tw *tableWriter) abort() {
	tw.w.Close()
	tw.f.Close()
	tw.b.Release()
	if tw.tmpPath != "" {
		os.Remove(tw.tmpPath)
	}
}
