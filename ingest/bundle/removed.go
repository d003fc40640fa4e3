package bundle

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/leakscope/leakscope/ingest/schema"
)

// An older bundle's table may hold columns its table has since dropped
// ([schema.Removed]); readers and copies leave them out, by name, so that
// every record handed on has the current schema's columns in order.

// withoutRemoved returns sc without the columns table no longer has.
func withoutRemoved(sc *arrow.Schema, table string) *arrow.Schema {
	return keeping(sc, keptFields(sc, table))
}

// keeping returns sc with only the columns keep indexes (all when nil).
func keeping(sc *arrow.Schema, keep []int) *arrow.Schema {
	if keep == nil {
		return sc
	}
	fields := make([]arrow.Field, len(keep))
	for i, j := range keep {
		fields[i] = sc.Field(j)
	}
	md := sc.Metadata()
	return arrow.NewSchema(fields, &md)
}

// keptFields returns the indexes of sc's columns that table still has, or
// nil when it has them all.
func keptFields(sc *arrow.Schema, table string) []int {
	var keep []int
	dropped := false
	for i, f := range sc.Fields() {
		if schema.Removed(table, f.Name) {
			dropped = true
			continue
		}
		keep = append(keep, i)
	}
	if !dropped {
		return nil
	}
	return keep
}

// remover takes, out of the records of one stream, the columns its table
// no longer has; it is worked out once per stream from the stream's schema.
// The zero remover has nothing to take out.
type remover struct {
	keep []int         // indexes of the columns kept; nil: all of them
	sc   *arrow.Schema // the schema of the records it returns
}

// newRemover returns the remover of a stream of schema sc of table.
func newRemover(sc *arrow.Schema, table string) remover {
	keep := keptFields(sc, table)
	if keep == nil {
		return remover{}
	}
	return remover{keep: keep, sc: keeping(sc, keep)}
}

// drop returns rec without the removed columns; the caller releases the
// result (rec itself, retained, when nothing is removed).
func (r remover) drop(rec arrow.Record) arrow.Record {
	if r.keep == nil {
		rec.Retain()
		return rec
	}
	cols := make([]arrow.Array, len(r.keep))
	for i, j := range r.keep {
		cols[i] = rec.Column(j)
	}
	return array.NewRecord(r.sc, cols, rec.NumRows())
}

// call calls fn with rec less the removed columns.
func (r remover) call(rec arrow.Record, fn func(arrow.Record) error) error {
	if r.keep == nil {
		return fn(rec)
	}
	out := r.drop(rec)
	defer out.Release()
	return fn(out)
}
