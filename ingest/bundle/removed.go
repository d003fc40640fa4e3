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
	keep := keptFields(sc, table)
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

// dropRemoved returns rec without the columns table no longer has; the
// caller releases the result (rec itself, retained, when nothing is
// dropped).
func dropRemoved(rec arrow.Record, table string) arrow.Record {
	keep := keptFields(rec.Schema(), table)
	if keep == nil {
		rec.Retain()
		return rec
	}
	cols := make([]arrow.Array, len(keep))
	for i, j := range keep {
		cols[i] = rec.Column(j)
	}
	return array.NewRecord(withoutRemoved(rec.Schema(), table), cols, rec.NumRows())
}

// callWithoutRemoved calls fn with rec less the columns table no longer has.
func callWithoutRemoved(rec arrow.Record, table string, fn func(arrow.Record) error) error {
	if keptFields(rec.Schema(), table) == nil {
		return fn(rec)
	}
	r := dropRemoved(rec, table)
	defer r.Release()
	return fn(r)
}
