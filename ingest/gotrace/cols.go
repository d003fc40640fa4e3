package gotrace

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/leakscope/leakscope/ingest/schema"
)

// The high-volume table trace_goroutines (one row per goroutine, millions
// in a busy trace) is built column by column here and handed to the
// bundle as whole record batches, instead of row by row through
// bundle.Writer.Append: that skips boxing each row in an interface and
// hashing every dictionary string.

// dictCol is the dictionary of a dictionary-encoded string column (the
// indices are kept by the caller, see dictArray); it grows as new values
// arrive. The dictionary array is rebuilt only when it grew, so
// consecutive batches share it and the IPC stream writes it once (then as
// a delta or replacement).
type dictCol struct {
	mem    memory.Allocator
	values []string
	index  map[string]int32
	dict   arrow.Array // cached dictionary of values, nil when stale
	recent recentStrings[int32]
}

func newDictCol(mem memory.Allocator, initial ...string) *dictCol {
	d := &dictCol{mem: mem, index: map[string]int32{}}
	for _, v := range initial {
		d.id(v)
	}
	return d
}

// id returns the dictionary index of v, adding it when new.
func (d *dictCol) id(v string) int32 {
	if i, ok := d.recent.get(v); ok {
		return i
	}
	i, ok := d.index[v]
	if ok {
		d.recent.put(v, i)
		return i
	}
	i = int32(len(d.values))
	d.values = append(d.values, v)
	d.index[v] = i
	d.recent.put(v, i)
	if d.dict != nil {
		d.dict.Release()
		d.dict = nil
	}
	return i
}

// dictionary returns the dictionary of the values seen so far (owned by
// d; arrays made from it retain it).
func (d *dictCol) dictionary() arrow.Array {
	if d.dict == nil {
		b := array.NewStringBuilder(d.mem)
		b.AppendValues(d.values, nil)
		d.dict = b.NewArray()
		b.Release()
	}
	return d.dict
}

func (d *dictCol) release() {
	if d.dict != nil {
		d.dict.Release()
		d.dict = nil
	}
}

// assemble makes a record of sc from named columns; columns the schema has
// but cols lacks are all null. It releases the arrays in cols.
func assemble(mem memory.Allocator, sc *arrow.Schema, n int, cols map[string]arrow.Array) (arrow.Record, error) {
	arrs := make([]arrow.Array, len(sc.Fields()))
	for i, f := range sc.Fields() {
		a, ok := cols[f.Name]
		if !ok {
			a = array.MakeArrayOfNull(mem, f.Type, n)
		}
		if !arrow.TypeEqual(a.DataType(), f.Type) {
			return nil, fmt.Errorf("column %s: built %s, schema says %s", f.Name, a.DataType(), f.Type)
		}
		arrs[i] = a
	}
	rec := array.NewRecord(sc, arrs, int64(n))
	for _, a := range arrs {
		a.Release()
	}
	return rec, nil
}

// stateIDs are the dictionary indexes of goStateNames in state columns.
func stateDict(mem memory.Allocator) *dictCol { return newDictCol(mem, goStateNames[:]...) }

// i64Array wraps vals (and an optional validity bitmap) as an array of
// type t without copying.
func i64Array(t arrow.DataType, vals []int64, valid []byte, nulls int) arrow.Array {
	var vb *memory.Buffer
	if nulls > 0 {
		vb = memory.NewBufferBytes(valid)
	}
	d := array.NewData(t, len(vals), []*memory.Buffer{vb, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(vals))}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// dictArray wraps dictionary indexes as a dictionary array of d's values.
func dictArray(d *dictCol, idx []int32) arrow.Array {
	data := array.NewData(arrow.PrimitiveTypes.Int32, len(idx), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(idx))}, nil, 0, 0)
	defer data.Release()
	ia := array.MakeFromData(data)
	defer ia.Release()
	return array.NewDictionaryArray(schema.DictString, ia, d.dictionary())
}

// goroutineCols builds trace_goroutines batches in plain Go slices, which
// become the record's buffers without a copy; null ids and times are 0
// and get a validity bitmap. A batch's slices go back to the pool once the
// sink has written (encoded) its record.
type goroutineCols struct {
	mem                  memory.Allocator
	cur                  *goroutineBatch
	pool                 chan *goroutineBatch
	start, state, reason *dictCol
}

type goroutineBatch struct {
	goid, parent, created, ended, creation, last []int64
	start, state, reason                         []int32
	valid                                        [5][]byte
}

func newGoroutineBatch() *goroutineBatch {
	n := colBatchRows
	return &goroutineBatch{
		goid: make([]int64, 0, n), parent: make([]int64, 0, n), created: make([]int64, 0, n), ended: make([]int64, 0, n),
		creation: make([]int64, 0, n), last: make([]int64, 0, n),
		start: make([]int32, 0, n), state: make([]int32, 0, n), reason: make([]int32, 0, n),
	}
}

func (b *goroutineBatch) reset() {
	b.goid, b.parent, b.created, b.ended = b.goid[:0], b.parent[:0], b.created[:0], b.ended[:0]
	b.creation, b.last = b.creation[:0], b.last[:0]
	b.start, b.state, b.reason = b.start[:0], b.state[:0], b.reason[:0]
}

func newGoroutineCols(mem memory.Allocator) *goroutineCols {
	return &goroutineCols{
		mem:    mem,
		cur:    newGoroutineBatch(),
		pool:   make(chan *goroutineBatch, 2),
		start:  newDictCol(mem, ""),
		state:  stateDict(mem),
		reason: newDictCol(mem, ""),
	}
}

// appendRow adds the row of goroutine goid; endWall is its end (0: alive
// at the end of the trace).
func (c *goroutineCols) appendRow(goid int64, g *gor, endWall int64) {
	b := c.cur
	b.goid = append(b.goid, goid)
	b.parent = append(b.parent, g.parent)
	b.created = append(b.created, g.createdWall)
	b.ended = append(b.ended, endWall)
	b.creation = append(b.creation, g.creationStack)
	b.start = append(b.start, c.start.id(g.startFunc))
	b.state = append(b.state, stateID(g.state))
	b.reason = append(b.reason, c.reason.id(g.reason))
	b.last = append(b.last, g.lastStack)
}

// record turns the current batch into a record and starts a new batch;
// recycle must be called with the returned batch once the record has been
// written and released.
func (c *goroutineCols) record() (arrow.Record, *goroutineBatch, error) {
	b := c.cur
	select {
	case c.cur = <-c.pool:
		c.cur.reset()
	default:
		c.cur = newGoroutineBatch()
	}
	opt := func(i int, t arrow.DataType, vals []int64) arrow.Array {
		var nulls int
		b.valid[i], nulls = validity(b.valid[i][:0], vals)
		return i64Array(t, vals, b.valid[i], nulls)
	}
	i64 := arrow.PrimitiveTypes.Int64
	rec, err := assemble(c.mem, schema.TraceGoroutinesSchema, len(b.goid), map[string]arrow.Array{
		schema.ColGoid:            i64Array(i64, b.goid, nil, 0),
		schema.ColParentGoid:      opt(0, i64, b.parent),
		schema.ColCreatedTS:       opt(1, schema.Timestamp, b.created),
		schema.ColEndedTS:         opt(2, schema.Timestamp, b.ended),
		schema.ColCreationStackID: opt(3, i64, b.creation),
		schema.ColStartFunction:   dictArray(c.start, b.start),
		schema.ColLastState:       dictArray(c.state, b.state),
		schema.ColLastReason:      dictArray(c.reason, b.reason),
		schema.ColLastStackID:     opt(4, i64, b.last),
	})
	return rec, b, err
}

// recycle returns a written batch's slices for reuse.
func (c *goroutineCols) recycle(b *goroutineBatch) {
	select {
	case c.pool <- b:
	default:
	}
}

func (c *goroutineCols) len() int { return len(c.cur.goid) }

func (c *goroutineCols) release() {
	c.start.release()
	c.state.release()
	c.reason.release()
}

// validity appends to dst the validity bitmap of vals, where 0 is null,
// and returns it with the number of nulls; a column without nulls needs
// no bitmap, so dst comes back as it was.
func validity(dst []byte, vals []int64) ([]byte, int) {
	if !slices.Contains(vals, 0) {
		return dst, 0
	}
	valid := 0
	n := len(vals) &^ 7
	for i := 0; i < n; i += 8 {
		v := vals[i : i+8 : i+8]
		w := nonZero(v[0]) | nonZero(v[1])<<1 | nonZero(v[2])<<2 | nonZero(v[3])<<3 |
			nonZero(v[4])<<4 | nonZero(v[5])<<5 | nonZero(v[6])<<6 | nonZero(v[7])<<7
		valid += bits.OnesCount8(w)
		dst = append(dst, w)
	}
	if n < len(vals) {
		var w byte
		for j, x := range vals[n:] {
			w |= nonZero(x) << j
		}
		valid += bits.OnesCount8(w)
		dst = append(dst, w)
	}
	return dst, len(vals) - valid
}

// nonZero is 1 for v != 0, else 0, without a branch.
func nonZero(v int64) byte {
	var b byte
	if v != 0 {
		b = 1
	}
	return b
}
