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
	"github.com/leakscope/leakscope/ingest/killpoint"
	"github.com/leakscope/leakscope/ingest/schema"
)

// batchRows is the number of buffered rows that triggers a batch write
// before the once-a-second flush.
const batchRows = 64 * 1024

// wideBatchRows is batchRows for tables whose rows are wide: a goroutines
// row holds the argument text of every frame (a few hundred bytes), and
// at 64 K rows a batch of a 1M-goroutine dump held ~12 MB in builders and
// ~40 MB more while the IPC writer compressed it, half the ingest's peak
// heap.
var wideBatchRows = map[string]int{schema.TableGoroutines: 16 * 1024}

// batchRowsOf is the number of buffered rows of table that triggers a
// batch write.
func batchRowsOf(table string) int {
	if n, ok := wideBatchRows[table]; ok {
		return n
	}
	return batchRows
}

// tableWriter appends rows of one table to TABLE.arrow of the bundle (a
// new bundle written in place), or to TABLE.arrow of a transaction's
// staging directory, which starts as a copy of the bundle's table and
// replaces it when the transaction commits.
type tableWriter struct {
	name    string
	path    string // where the rows are written
	staged  bool   // path is in a staging directory
	f       *os.File
	w       *ipc.Writer
	b       *array.RecordBuilder
	pending int
	limit   int // pending rows that trigger a batch write
	rows    int64
	schema  *arrow.Schema
	enc     *deltaCodec // nil when the table stores its columns as they are
	mem     memory.Allocator
}

func tablePath(dir, table string) string { return filepath.Join(dir, table+".arrow") }

// tableCodec is the IPC compression of every table: LZ4. Arrow Go's IPC
// writer (v15) sets up a new compressor for every record batch and every
// dictionary batch it writes; a zstd encoder allocates and zeroes a 16 MB
// history each time, which made a capture's raw files ingest in 5 times
// the wall time and 7 times the CPU for tables 10-15 % smaller
// (docs/PERF.md). Readers handle zstd as well, which
// bundles written before hold.
func tableCodec() ipc.Option { return ipc.WithLZ4() }

// newTableWriter starts the table in dir; with a staging directory stage,
// it writes there, after a copy of what dir's table holds.
func newTableWriter(dir, stage, table string, mem memory.Allocator) (*tableWriter, error) {
	sc, ok := schema.Schemas[table]
	if !ok {
		return nil, fmt.Errorf("unknown table %q", table)
	}
	tw := &tableWriter{name: table, path: tablePath(dir, table), schema: sc, enc: newEncoder(table), limit: batchRowsOf(table), mem: mem}
	orig := tw.path
	exists := false
	if stage != "" {
		tw.path, tw.staged = tablePath(stage, table), true
		_, statErr := os.Stat(orig)
		exists = statErr == nil
	}
	f, err := os.OpenFile(tw.path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", table, err)
	}
	tw.f = f
	tw.w = ipc.NewWriter(f, ipc.WithSchema(schema.StoredSchema(table)), tableCodec(), ipc.WithAllocator(writerMem(mem)))
	tw.b = array.NewRecordBuilder(mem, sc)
	if exists {
		n, err := tw.copyTable(orig)
		tw.rows = n
		if err != nil && !errors.As(err, new(*PartialError)) {
			tw.abort()
			return nil, fmt.Errorf("copy existing table %s: %w", table, err)
		}
	}
	return tw, nil
}

// copyTable writes every readable batch of the stream at path to the
// table, widened to the current schema when the stream predates columns
// added since.
func (tw *tableWriter) copyTable(path string) (int64, error) {
	var rows int64
	err := readStream(path, tw.schema, tw.mem, func(rec arrow.Record) error {
		rows += rec.NumRows()
		return tw.writeWidened(rec)
	})
	return rows, err
}

// writeWidened writes rec, widened to the table's schema when rec
// predates columns added since.
func (tw *tableWriter) writeWidened(rec arrow.Record) error {
	sc := tw.schema
	if int(rec.NumCols()) >= sc.NumFields() && keptFields(rec.Schema(), schema.TableOf(sc)) == nil {
		return tw.write(rec)
	}
	wide, err := widen(rec, sc, tw.mem)
	if err != nil {
		return err
	}
	defer wide.Release()
	return tw.write(wide)
}

// write writes rec, of the table's schema, in the form its file stores.
func (tw *tableWriter) write(rec arrow.Record) error {
	if tw.enc == nil {
		return tw.w.Write(rec)
	}
	enc := tw.enc.encode(rec)
	defer enc.Release()
	return tw.w.Write(enc)
}

// widen returns rec without the columns its table no longer has and with
// the columns of sc it lacks appended as nulls. Only columns added later
// ([schema.Added]) may be missing.
func widen(rec arrow.Record, sc *arrow.Schema, mem memory.Allocator) (arrow.Record, error) {
	if err := checkSchema(rec.Schema(), sc); err != nil {
		return nil, err
	}
	rec = newRemover(rec.Schema(), schema.TableOf(sc)).drop(rec)
	defer rec.Release()
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
	if err := tw.write(rec); err != nil {
		return fmt.Errorf("write table %s: %w", tw.name, err)
	}
	killpoint.At("bundle:batch")
	return nil
}

// close flushes and ends the stream. A staged table is moved into the
// bundle by the transaction's commit.
func (tw *tableWriter) close() error {
	err := tw.flush()
	if cerr := tw.w.Close(); err == nil {
		err = cerr
	}
	if cerr := tw.f.Close(); err == nil {
		err = cerr
	}
	tw.b.Release()
	return err
}

// abort stops writing; the caller drops what was written.
func (tw *tableWriter) abort() {
	tw.w.Close()
	tw.f.Close()
	tw.b.Release()
}

// writerMem is the allocator an IPC writer gets: the shared buffer pool,
// unless the bundle's allocator is a checked or custom one (tests count
// what they allocate).
func writerMem(mem memory.Allocator) memory.Allocator {
	if mem == memory.DefaultAllocator {
		return sharedPool
	}
	return mem
}
