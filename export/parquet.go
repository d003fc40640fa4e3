package export

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/killpoint"
	"github.com/leakscope/leakscope/ingest/schema"
)

// Tables written besides the bundle's own.
const (
	// TableSuspects holds one row per suspect of the analysis report.
	TableSuspects = "suspects"
	// TableCaptures holds one row describing the capture (its manifest).
	TableCaptures = "captures"
)

// rowGroupRows bounds the rows of one Parquet row group (and so the
// memory a table's writer buffers).
const rowGroupRows = 256 << 10

// Options configures [Parquet].
type Options struct {
	// Mem allocates the Arrow buffers (nil: the default allocator).
	Mem memory.Allocator
	// Analysis configures the analysis whose suspects are exported.
	Analysis analysis.Options
}

// Table is one Parquet file written.
type Table struct {
	Name string
	Path string
	Rows int64
	// Truncated is set when the bundle's table was cut short (a capture
	// killed mid-batch): its complete batches were exported.
	Truncated string
}

// Capture is what [Parquet] wrote for one bundle.
type Capture struct {
	// Dir is DIR/node=NODE/capture=ID.
	Dir    string
	Tables []Table
	Report *analysis.Report
}

// Parquet writes every table of b, its suspects and its manifest summary
// as Parquet files under dir in a hive layout: dir/node=NODE/capture=ID/
// TABLE.parquet. The capture's directory is written under dir/[WorkDir]
// and renamed into place, replacing an earlier export of the same capture,
// so a reader never sees half an export, and a kill at any step leaves the
// earlier export or the new one (the next export cleans up).
func Parquet(b *bundle.Bundle, dir string, o Options) (Capture, error) {
	if o.Mem == nil {
		o.Mem = memory.DefaultAllocator
	}
	rep, err := analysis.Analyze(b, o.Mem, o.Analysis)
	if err != nil {
		return Capture{}, fmt.Errorf("analyse %s: %w", b.Dir, err)
	}
	final := CaptureDir(dir, b.Manifest)
	tmp, release, err := begin(dir)
	if err != nil {
		return Capture{}, err
	}
	defer release()
	defer os.RemoveAll(filepath.Dir(tmp))
	out := Capture{Dir: final, Report: rep}
	for _, name := range schema.TableNames {
		if !b.Has(name) {
			continue
		}
		t, err := writeBundleTable(b, name, filepath.Join(tmp, name+".parquet"+partSuffix), o.Mem)
		if err != nil {
			return Capture{}, err
		}
		out.Tables = append(out.Tables, t)
		killpoint.At("export:table")
	}
	for _, t := range []struct {
		name string
		rec  arrow.Record
	}{
		{TableSuspects, suspectsRecord(rep, b.Manifest, o.Mem)},
		{TableCaptures, capturesRecord(b.Manifest, rep, o.Mem)},
	} {
		path := filepath.Join(tmp, t.name+".parquet"+partSuffix)
		err := writeRecords(path, t.rec.Schema(), func(put func(arrow.Record) error) error { return put(t.rec) })
		rows := t.rec.NumRows()
		t.rec.Release()
		if err != nil {
			return Capture{}, err
		}
		out.Tables = append(out.Tables, Table{Name: t.name, Path: path, Rows: rows})
	}
	if err := finish(tmp, final, dir); err != nil {
		return Capture{}, err
	}
	for i := range out.Tables {
		out.Tables[i].Path = filepath.Join(final, strings.TrimSuffix(filepath.Base(out.Tables[i].Path), partSuffix))
	}
	return out, nil
}

// CaptureDir is where [Parquet] writes the capture m under dir.
func CaptureDir(dir string, m bundle.Manifest) string {
	node := m.Node
	if node == "" {
		node = "unknown"
	}
	id := m.CaptureID
	if id == "" {
		id = "unknown"
	}
	return filepath.Join(dir, "node="+hiveEscape(node), "capture="+hiveEscape(id))
}

// hiveEscape percent-encodes what a hive partition value must not hold
// (path separators, '=', '%', and anything outside a safe set).
func hiveEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteString(strings.ReplaceAll(url.QueryEscape(string(r)), "+", "%20"))
		}
	}
	return b.String()
}

// writeBundleTable copies one bundle table into a Parquet file, batch by
// batch, under the table's current schema (see [plainRecord]).
func writeBundleTable(b *bundle.Bundle, name, path string, mem memory.Allocator) (Table, error) {
	sch, err := plainSchema(schema.Schemas[name])
	if err != nil {
		return Table{}, fmt.Errorf("export %s: %w", name, err)
	}
	t := Table{Name: name, Path: path}
	err = writeRecords(path, sch, func(put func(arrow.Record) error) error {
		err := b.ReadTable(name, mem, func(rec arrow.Record) error {
			p, err := plainRecord(rec, sch, mem)
			if err != nil {
				return err
			}
			defer p.Release()
			t.Rows += p.NumRows()
			return put(p)
		})
		var pe *bundle.PartialError
		if errors.As(err, &pe) {
			t.Truncated = pe.Error()
			return nil
		}
		return err
	})
	if err != nil {
		return Table{}, fmt.Errorf("export %s of %s: %w", name, b.Dir, err)
	}
	return t, nil
}

// writeRecords writes the records fill puts into a new Parquet file.
func writeRecords(path string, sch *arrow.Schema, fill func(put func(arrow.Record) error) error) error {
	w, closer, err := newWriter(path, sch)
	if err != nil {
		return err
	}
	err = fill(w.WriteBuffered)
	if cerr := closer(); err == nil {
		err = cerr
	}
	return err
}

// newWriter creates a Parquet file: zstd-compressed, dictionary-encoded
// where it pays, with the Arrow schema stored so that readers keep time
// zones and types. closer finishes the file.
func newWriter(path string, sch *arrow.Schema) (*pqarrow.FileWriter, func() error, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithDictionaryDefault(true),
		parquet.WithMaxRowGroupLength(rowGroupRows),
		parquet.WithCreatedBy("leakscope"),
		// The Parquet spec wants the root schema element without
		// repetition; the library's default is REPEATED, which readers
		// such as hyparquet refuse.
		parquet.WithRootRepetition(parquet.Repetitions.Required),
	)
	w, err := pqarrow.NewFileWriter(sch, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return w, func() error {
		err := w.Close() // closes f too
		f.Close()
		return err
	}, nil
}
