package export

import (
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// plainSchema returns s with every dictionary-of-string column turned into
// a plain string column. Bundle tables replace their dictionaries per
// batch; Parquet dictionary-encodes each column chunk itself.
func plainSchema(s *arrow.Schema) (*arrow.Schema, error) {
	fields := make([]arrow.Field, len(s.Fields()))
	for i, f := range s.Fields() {
		if dt, ok := f.Type.(*arrow.DictionaryType); ok {
			if dt.ValueType.ID() != arrow.STRING {
				return nil, fmt.Errorf("column %s: dictionary of %s is not supported", f.Name, dt.ValueType)
			}
			f.Type = arrow.BinaryTypes.String
		}
		fields[i] = f
	}
	md := s.Metadata()
	return arrow.NewSchema(fields, &md), nil
}

// plainRecord returns rec under schema out (from [plainSchema]): dictionary
// columns decoded, the others shared. The caller releases the result.
func plainRecord(rec arrow.Record, out *arrow.Schema, mem memory.Allocator) arrow.Record {
	cols := make([]arrow.Array, rec.NumCols())
	for i, c := range rec.Columns() {
		if d, ok := c.(*array.Dictionary); ok {
			cols[i] = decodeStrings(d, mem)
			continue
		}
		c.Retain()
		cols[i] = c
	}
	r := array.NewRecord(out, cols, rec.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return r
}

// decodeStrings turns a dictionary-of-string array into a string array.
func decodeStrings(d *array.Dictionary, mem memory.Allocator) arrow.Array {
	vals := d.Dictionary().(*array.String)
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(d.Len())
	for i := 0; i < d.Len(); i++ {
		if d.IsNull(i) {
			b.AppendNull()
			continue
		}
		b.Append(vals.Value(d.GetValueIndex(i)))
	}
	return b.NewArray()
}
