// Package tables reads a bundle's rows into the structures the analysis
// stages use: the goroutines table's columns batch by batch, strings
// copied out of Arrow memory once, profile samples per stack, trace and
// eBPF goroutines with the probes' windows, spans, the words a frame's
// arguments print, the kept source's rows (functions, whole files, the
// call index), metrics, GC starts and race accesses. Columns are looked
// up by name, so readers keep working when producers add columns. It
// reads and merges rows; what the rows mean for a leak is decided in
// package analysis, which imports it.
package tables

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// cols looks up record columns by name, so readers keep working when
// producers add columns.
type cols struct{ rec arrow.Record }

// idx is the index of the named column, or -1 when the record lacks it.
func (c cols) idx(name string) int {
	ix := c.rec.Schema().FieldIndices(name)
	if len(ix) == 0 {
		return -1
	}
	return ix[0]
}

// i64 returns an int64 reader for the column; a missing column reads as 0.
func (c cols) i64(name string) func(int) int64 {
	i := c.idx(name)
	if i < 0 {
		return func(int) int64 { return 0 }
	}
	switch a := c.rec.Column(i).(type) {
	case *array.Int64:
		return func(r int) int64 {
			if a.IsNull(r) {
				return 0
			}
			return a.Value(r)
		}
	case *array.Timestamp:
		return func(r int) int64 {
			if a.IsNull(r) {
				return 0
			}
			return int64(a.Value(r))
		}
	case *array.Uint64:
		return func(r int) int64 {
			if a.IsNull(r) {
				return 0
			}
			return int64(a.Value(r))
		}
	}
	return func(int) int64 { return 0 }
}

// f64 returns a float64 reader for the column; a missing column reads
// as 0.
func (c cols) f64(name string) func(int) float64 {
	i := c.idx(name)
	if i < 0 {
		return func(int) float64 { return 0 }
	}
	if a, ok := c.rec.Column(i).(*array.Float64); ok {
		return a.Value
	}
	return func(int) float64 { return 0 }
}

// str returns a string reader; values point into Arrow memory and must be
// copied (see Interner) before the record is released.
func (c cols) str(name string) func(int) string {
	i := c.idx(name)
	if i < 0 {
		return func(int) string { return "" }
	}
	switch c.rec.Column(i).(type) {
	case *array.String, *array.Dictionary:
		return bundle.NewStrings(c.rec.Column(i)).Value
	}
	return func(int) string { return "" }
}

// strLists returns a reader of a list<utf8> column calling fn with each
// string of row r in order; a missing column or a null row calls fn
// never. Strings point into Arrow memory.
func (c cols) strLists(name string) func(r int, fn func(i int, s string)) {
	i := c.idx(name)
	if i < 0 {
		return func(int, func(int, string)) {}
	}
	l, ok := c.rec.Column(i).(*array.List)
	if !ok {
		return func(int, func(int, string)) {}
	}
	vals, ok := l.ListValues().(*array.String)
	if !ok {
		return func(int, func(int, string)) {}
	}
	return func(r int, fn func(int, string)) {
		if l.IsNull(r) {
			return
		}
		from, to := l.ValueOffsets(r)
		for j := from; j < to; j++ {
			fn(int(j-from), vals.Value(int(j)))
		}
	}
}

// Interner copies strings out of Arrow buffers once per distinct value.
type Interner map[string]string

// Get returns s, copied the first time it is seen.
func (in Interner) Get(s string) string {
	if v, ok := in[s]; ok {
		return v
	}
	c := strings.Clone(s)
	in[c] = c
	return c
}

// readRows reads table batch by batch, calling fn with each batch's
// columns and row count. A table cut short is tolerated (see
// bundle.Tolerate); another error says what was being read.
func readRows(b *bundle.Bundle, mem memory.Allocator, table, what string, fn func(c cols, rows int)) error {
	err := b.ReadTable(table, mem, func(rec arrow.Record) error {
		fn(cols{rec: rec}, int(rec.NumRows()))
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	return nil
}
