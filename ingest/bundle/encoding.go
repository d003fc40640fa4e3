package bundle

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/schema"
)

// deltaCodec turns the records of a table between the columns readers see
// and the delta-encoded columns its file stores ([schema.Encodings]).
type deltaCodec struct {
	cols  []int // indexes of the encoded columns, the same in both forms
	lows  []int // index of each one's stored low bits, -1 for none
	bases []int // index of each one's Base column, -1 for deltas
	out   *arrow.Schema
	types []arrow.DataType
	keep  []int // decoding: the columns of the stored form readers see
	// encode's output buffers, reused once a record is written
	scratch    [][]int64
	lowScratch [][]uint16
}

// newEncoder returns the codec that encodes records of table for its file,
// nil when the table stores every column as it is.
func newEncoder(table string) *deltaCodec {
	encs := schema.Encodings(table)
	if len(encs) == 0 {
		return nil
	}
	sc := schema.Schemas[table]
	c := &deltaCodec{out: schema.StoredSchema(table), scratch: make([][]int64, len(encs)), lowScratch: make([][]uint16, len(encs))}
	for _, e := range encs {
		c.cols = append(c.cols, sc.FieldIndices(e.Column)[0])
		c.bases = append(c.bases, baseIndex(sc, e))
		c.types = append(c.types, arrow.PrimitiveTypes.Int64)
		low := -1
		if e.Low != "" {
			low = c.out.FieldIndices(e.Low)[0]
		}
		c.lows = append(c.lows, low)
	}
	return c
}

// newDecoder returns the codec that decodes the records of a file of
// table whose schema is got, and the schema readers see; a nil codec
// when got stores every column as it is (schema 2 and before, or a table
// without encodings). It reads the stored forms of schemas 3 and 4 too
// (each encoding's Former).
func newDecoder(got *arrow.Schema, table string) (*deltaCodec, *arrow.Schema) {
	var c *deltaCodec
	fields := got.Fields()
	drop := map[int]bool{}
	for _, e := range schema.Encodings(table) {
		form, i, low := storedForm(got, e)
		if i < 0 {
			continue
		}
		want := schema.Schemas[table].Field(schema.Schemas[table].FieldIndices(e.Column)[0])
		if c == nil {
			c = &deltaCodec{}
		}
		c.cols = append(c.cols, i)
		c.lows = append(c.lows, low)
		c.bases = append(c.bases, baseIndex(got, form))
		c.types = append(c.types, want.Type)
		fields[i] = arrow.Field{Name: want.Name, Type: want.Type, Nullable: fields[i].Nullable, Metadata: want.Metadata}
		if low >= 0 {
			drop[low] = true
		}
	}
	if c == nil {
		return nil, got
	}
	var kept []arrow.Field
	for i, f := range fields {
		if !drop[i] {
			c.keep = append(c.keep, i)
			kept = append(kept, f)
		}
	}
	md := got.Metadata()
	c.out = arrow.NewSchema(kept, &md)
	return c, c.out
}

// storedForm returns the form in which got stores e's column (e itself
// or one of its Former), the index in got of its stored int64 column and
// that of its uint16 low bits (-1 for a form without Low); -1, -1 when
// got stores the column as it is.
func storedForm(got *arrow.Schema, e schema.Encoding) (schema.Encoding, int, int) {
	col := func(name string, t arrow.DataType) int {
		idx := got.FieldIndices(name)
		if len(idx) != 1 || !arrow.TypeEqual(got.Field(idx[0]).Type, t) {
			return -1
		}
		return idx[0]
	}
	for _, f := range append([]schema.Encoding{e}, e.Former...) {
		i, low := col(f.Stored, arrow.PrimitiveTypes.Int64), -1
		if f.Low != "" {
			low = col(f.Low, arrow.PrimitiveTypes.Uint16)
		}
		if i >= 0 && (f.Low == "") == (low < 0) {
			return f, i, low
		}
	}
	return e, -1, -1
}

// baseIndex is the index in sc of form's Base column (-1 for deltas, or
// when sc lacks it, as a schema-2 table has no encoded column to decode).
// A Base that is itself encoded is found under one of its stored names.
func baseIndex(sc *arrow.Schema, form schema.Encoding) int {
	if form.Base == "" {
		return -1
	}
	names := []string{form.Base}
	for _, o := range schema.Encodings(schema.TableOf(sc)) {
		if o.Column == form.Base {
			names = append(names, o.Stored)
			for _, f := range o.Former {
				names = append(names, f.Stored)
			}
		}
	}
	for _, n := range names {
		if idx := sc.FieldIndices(n); len(idx) == 1 {
			return idx[0]
		}
	}
	return -1
}

// int64Values returns the value buffer of a, an int64-wide array, and
// the part of it that holds a's values.
func int64Values(a arrow.Array) (buf, vals []int64) {
	d := a.Data()
	if b := d.Buffers()[1]; b != nil {
		buf = arrow.Int64Traits.CastFromBytes(b.Bytes())
	}
	return buf, buf[d.Offset() : d.Offset()+d.Len()]
}

// validBits returns a's validity bitmap, nil when a has no nulls.
func validBits(a arrow.Array) []byte {
	d := a.Data()
	if d.NullN() == 0 || d.Buffers()[0] == nil {
		return nil
	}
	return d.Buffers()[0].Bytes()
}

// uint16Values returns the values of a, a uint16 array.
func uint16Values(a arrow.Array) []uint16 {
	d := a.Data()
	var buf []uint16
	if b := d.Buffers()[1]; b != nil {
		buf = arrow.Uint16Traits.CastFromBytes(b.Bytes())
	}
	return buf[d.Offset() : d.Offset()+d.Len()]
}

// withValues returns a's data as an array of type t over the value buffer
// vals (with a's offset and validity).
func withValues(a arrow.Array, t arrow.DataType, vals []int64) arrow.Array {
	d := a.Data()
	bufs := []*memory.Buffer{d.Buffers()[0], memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(vals))}
	nd := array.NewData(t, d.Len(), bufs, nil, d.NullN(), d.Offset())
	defer nd.Release()
	return array.MakeFromData(nd)
}

// lowArray returns vals[off:off+n] as a uint16 array without nulls.
func lowArray(vals []uint16, off, n int) arrow.Array {
	bufs := []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Uint16Traits.CastToBytes(vals))}
	nd := array.NewData(arrow.PrimitiveTypes.Uint16, n, bufs, nil, 0, off)
	defer nd.Release()
	return array.MakeFromData(nd)
}

// encode returns rec with the encoded columns as deltas, in buffers the
// codec reuses: the result is valid until the next call. The caller
// releases it.
func (c *deltaCodec) encode(rec arrow.Record) arrow.Record {
	cols := make([]arrow.Array, c.out.NumFields())
	copy(cols, rec.Columns())
	var made []arrow.Array
	for k, i := range c.cols {
		a := rec.Column(i)
		_, vals := int64Values(a)
		off := a.Data().Offset()
		s := grow(c.scratch[k], off+len(vals))
		c.scratch[k] = s
		if b := c.bases[k]; b >= 0 {
			_, base := int64Values(rec.Column(b))
			valid := validBits(a)
			for j, v := range vals {
				if valid == nil || bitutil.BitIsSet(valid, off+j) {
					s[off+j] = v - base[j]
				} else {
					s[off+j] = 0
				}
			}
		} else {
			var prev int64
			for j, v := range vals {
				s[off+j], prev = v-prev, v
			}
		}
		if low := c.lows[k]; low >= 0 {
			lo := grow(c.lowScratch[k], off+len(vals))
			c.lowScratch[k] = lo
			for j := off; j < off+len(vals); j++ {
				lo[j] = uint16(s[j])
				s[j] >>= 16
			}
			la := lowArray(lo, off, len(vals))
			made = append(made, la)
			cols[low] = la
		}
		enc := withValues(a, c.types[k], s)
		made = append(made, enc)
		cols[i] = enc
	}
	out := array.NewRecord(c.out, cols, rec.NumRows())
	for _, a := range made {
		a.Release()
	}
	return out
}

// grow returns s with length n, reallocated when its capacity is less.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// decode returns rec with the stored deltas summed back into the
// columns' values, in place: rec's buffers are the reader's own. The
// caller releases the result.
func (c *deltaCodec) decode(rec arrow.Record) arrow.Record {
	cols := append([]arrow.Array(nil), rec.Columns()...)
	var made []arrow.Array
	for k, i := range c.cols {
		a := rec.Column(i)
		buf, vals := int64Values(a)
		if low := c.lows[k]; low >= 0 {
			for j, lo := range uint16Values(rec.Column(low)) {
				vals[j] = vals[j]<<16 | int64(lo)
			}
		}
		if b := c.bases[k]; b >= 0 {
			// The base column comes earlier in the encodings: it is
			// decoded already, in place.
			_, base := int64Values(rec.Column(b))
			valid, off := validBits(a), a.Data().Offset()
			for j, v := range vals {
				if valid == nil || bitutil.BitIsSet(valid, off+j) {
					vals[j] = v + base[j]
				} else {
					vals[j] = 0
				}
			}
		} else {
			var sum int64
			for j, v := range vals {
				sum += v
				vals[j] = sum
			}
		}
		dec := withValues(a, c.types[k], buf)
		made = append(made, dec)
		cols[i] = dec
	}
	kept := make([]arrow.Array, len(c.keep))
	for j, i := range c.keep {
		kept[j] = cols[i]
	}
	out := array.NewRecord(c.out, kept, rec.NumRows())
	for _, a := range made {
		a.Release()
	}
	return out
}
