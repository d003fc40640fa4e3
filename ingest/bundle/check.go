package bundle

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// checkRecord verifies that every column of rec holds what its length
// claims: buffers long enough, offsets in order and inside their data,
// dictionary indices inside their dictionary. Readers index columns
// without checks, so a batch that fails here is refused before any reader
// sees it.
func checkRecord(rec arrow.Record) error {
	for i, col := range rec.Columns() {
		if int64(col.Len()) != rec.NumRows() {
			return fmt.Errorf("column %d (%s) has %d rows, the batch %d", i, rec.ColumnName(i), col.Len(), rec.NumRows())
		}
		if err := checkData(col.Data()); err != nil {
			return fmt.Errorf("column %d (%s): %w", i, rec.ColumnName(i), err)
		}
	}
	return nil
}

// checkData checks one array's buffers against its type, length and offset.
func checkData(d arrow.ArrayData) error {
	n, off := int64(d.Len()), int64(d.Offset())
	if n < 0 || off < 0 {
		return fmt.Errorf("negative length %d or offset %d", n, off)
	}
	end := n + off
	bufs := d.Buffers()
	if d.NullN() > 0 && d.DataType().ID() != arrow.NULL {
		if len(bufs) == 0 || bufs[0] == nil || int64(bufs[0].Len()) < bitmapBytes(end) {
			return fmt.Errorf("validity bitmap shorter than %d rows", end)
		}
	}
	switch t := d.DataType().(type) {
	case *arrow.DictionaryType:
		return checkDictionary(d, t)
	case *arrow.BooleanType:
		return needBuffer(bufs, 1, bitmapBytes(end), n)
	case arrow.FixedWidthDataType:
		return needBuffer(bufs, 1, end*int64(t.BitWidth()/8), n)
	case *arrow.StringType, *arrow.BinaryType:
		if n == 0 {
			return nil
		}
		offs, err := offsets32(bufs, off, n)
		if err != nil {
			return err
		}
		return checkOffsets(offs, int64(bufLen(bufs, 2)), "data")
	case *arrow.ListType:
		if n == 0 {
			return nil
		}
		offs, err := offsets32(bufs, off, n)
		if err != nil {
			return err
		}
		child := d.Children()
		if len(child) != 1 {
			return fmt.Errorf("list has %d children", len(child))
		}
		if err := checkOffsets(offs, int64(child[0].Len()), "values"); err != nil {
			return err
		}
		return checkData(child[0])
	}
	return fmt.Errorf("column type %s is not one a leakscope table holds", d.DataType())
}

// checkDictionary checks a dictionary column's indices and values.
func checkDictionary(d arrow.ArrayData, t *arrow.DictionaryType) error {
	dict := d.Dictionary()
	if dict == nil {
		return fmt.Errorf("dictionary column without a dictionary")
	}
	if err := checkData(dict); err != nil {
		return fmt.Errorf("dictionary: %w", err)
	}
	n, off := int64(d.Len()), int64(d.Offset())
	it, ok := t.IndexType.(arrow.FixedWidthDataType)
	if !ok {
		return fmt.Errorf("dictionary index type %s", t.IndexType)
	}
	if err := needBuffer(d.Buffers(), 1, (n+off)*int64(it.BitWidth()/8), n); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	idx := array.MakeFromData(d)
	defer idx.Release()
	dc := idx.(*array.Dictionary)
	size := dict.Len()
	for i := 0; i < dc.Len(); i++ {
		if dc.IsValid(i) {
			if v := dc.GetValueIndex(i); v < 0 || v >= size {
				return fmt.Errorf("row %d: dictionary index %d outside a dictionary of %d values", i, v, size)
			}
		}
	}
	return nil
}

func bitmapBytes(n int64) int64 { return (n + 7) / 8 }

func bufLen(bufs []*memory.Buffer, i int) int {
	if i >= len(bufs) || bufs[i] == nil {
		return 0
	}
	return bufs[i].Len()
}

// needBuffer requires buffer i to hold at least want bytes when the array
// has rows.
func needBuffer(bufs []*memory.Buffer, i int, want, rows int64) error {
	if rows == 0 {
		return nil
	}
	if got := int64(bufLen(bufs, i)); got < want {
		return fmt.Errorf("buffer %d holds %d bytes, %d rows need %d", i, got, rows, want)
	}
	return nil
}

// offsets32 returns the n+1 int32 offsets of rows off..off+n.
func offsets32(bufs []*memory.Buffer, off, n int64) ([]byte, error) {
	if err := needBuffer(bufs, 1, (off+n+1)*4, n); err != nil {
		return nil, fmt.Errorf("offsets: %w", err)
	}
	return bufs[1].Bytes()[off*4 : (off+n+1)*4], nil
}

// checkOffsets requires little-endian int32 offsets to start at 0 or more,
// never decrease and end within limit.
func checkOffsets(offs []byte, limit int64, what string) error {
	prev := int64(int32(binary.LittleEndian.Uint32(offs)))
	if prev < 0 {
		return fmt.Errorf("negative first offset %d", prev)
	}
	for i := 4; i < len(offs); i += 4 {
		v := int64(int32(binary.LittleEndian.Uint32(offs[i:])))
		if v < prev {
			return fmt.Errorf("offset %d (%d) before offset %d (%d)", i/4, v, i/4-1, prev)
		}
		prev = v
	}
	if prev > limit {
		return fmt.Errorf("last offset %d past the end of its %s (%d)", prev, what, limit)
	}
	return nil
}
