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

// plainRecord returns rec under schema out (from [plainSchema] of the
// table's current schema): columns matched by name, dictionary columns
// decoded, columns an older bundle lacks filled with nulls, so every
// export of a table has the same columns. The caller releases the result.
func plainRecord(rec arrow.Record, out *arrow.Schema, mem memory.Allocator) (arrow.Record, error) {
	cols := make([]arrow.Array, 0, len(out.Fields()))
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	n := int(rec.NumRows())
	for _, f := range out.Fields() {
		idx := rec.Schema().FieldIndices(f.Name)
		if len(idx) == 0 {
			cols = append(cols, array.MakeArrayOfNull(mem, f.Type, n))
			continue
		}
		c := rec.Column(idx[0])
		if d, ok := c.(*array.Dictionary); ok {
			cols = append(cols, decodeStrings(d, mem))
			continue
		}
		if !arrow.TypeEqual(c.DataType(), f.Type) {
			release()
			return nil, fmt.Errorf("column %s is %s, want %s", f.Name, c.DataType(), f.Type)
		}
		if sa, ok := c.(*array.String); ok {
			cols = append(cols, validStrings(sa, mem))
			continue
		}
		if la, ok := c.(*array.List); ok {
			cols = append(cols, validLists(la, mem))
			continue
		}
		c.Retain()
		cols = append(cols, c)
	}
	r := array.NewRecord(out, cols, int64(n))
	release()
	return r, nil
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
		b.Append(validUTF8(vals.Value(d.GetValueIndex(i))))
	}
	return b.NewArray()
}
