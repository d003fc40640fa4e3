package dump

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/schema"
)

// colBatchRows is the most goroutines rows buffered before a batch is
// written: a row holds the argument text of each of its frames, a few
// hundred bytes.
const colBatchRows = 16 * 1024

// goroutineCols builds batches of the goroutines table in plain Go slices
// that become the record's buffers without a copy, reused batch after
// batch: a dump holds up to millions of goroutines, and Arrow's builders,
// fed row by row through bundle.Writer.Append, cost a boxed row, a hash of
// each dictionary string and buffers grown anew for every batch.
type goroutineCols struct {
	mem                               memory.Allocator
	state, creator, source            *dictCol
	ts, goid, wait, stack, cgoid, cst []int64
	stateIdx, creatorIdx, sourceIdx   []int32
	locked, elided                    []bool
	labelOff                          []int32 // len(rows)+1 offsets into labelData
	labelData                         []byte
	argsOff                           []int32 // len(rows)+1 offsets into argOff
	argsNull                          []bool  // the row has no frame_args (null)
	argOff                            []int32 // one more than the frame arguments, into argData
	argData                           []byte
	bits                              [6][]byte // validity and boolean bitmaps
}

func newGoroutineCols(mem memory.Allocator) *goroutineCols {
	c := &goroutineCols{mem: mem, state: newDictCol(mem), creator: newDictCol(mem), source: newDictCol(mem)}
	c.reset()
	return c
}

// sibling returns an empty batch that shares c's dictionaries.
func (c *goroutineCols) sibling() *goroutineCols {
	s := &goroutineCols{mem: c.mem, state: c.state, creator: c.creator, source: c.source}
	s.reset()
	return s
}

func (c *goroutineCols) reset() {
	c.ts, c.goid, c.wait, c.stack, c.cgoid, c.cst = c.ts[:0], c.goid[:0], c.wait[:0], c.stack[:0], c.cgoid[:0], c.cst[:0]
	c.stateIdx, c.creatorIdx, c.sourceIdx = c.stateIdx[:0], c.creatorIdx[:0], c.sourceIdx[:0]
	c.locked, c.elided, c.argsNull = c.locked[:0], c.elided[:0], c.argsNull[:0]
	c.labelOff, c.labelData = append(c.labelOff[:0], 0), c.labelData[:0]
	c.argsOff, c.argOff, c.argData = append(c.argsOff[:0], 0), append(c.argOff[:0], 0), c.argData[:0]
}

func (c *goroutineCols) len() int { return len(c.goid) }

// append adds r, as schema.Goroutine.AppendTo would.
func (c *goroutineCols) append(r *schema.Goroutine) {
	c.ts = append(c.ts, r.SnapshotTS)
	c.goid = append(c.goid, r.Goid)
	c.stateIdx = append(c.stateIdx, c.state.id(r.State))
	c.wait = append(c.wait, r.WaitMinutes)
	c.locked = append(c.locked, r.LockedThread)
	c.stack = append(c.stack, r.StackID)
	c.cgoid = append(c.cgoid, r.CreatorGoid)
	c.creatorIdx = append(c.creatorIdx, c.creator.id(r.CreatorFunction))
	c.cst = append(c.cst, r.CreatorStackID)
	c.labelData = append(c.labelData, r.Labels...)
	c.labelOff = append(c.labelOff, int32(len(c.labelData)))
	c.elided = append(c.elided, r.FramesElided)
	c.sourceIdx = append(c.sourceIdx, c.source.id(r.Source))
	c.argsNull = append(c.argsNull, r.FrameArgs == nil)
	for _, a := range r.FrameArgs {
		c.argData = append(c.argData, a...)
		c.argOff = append(c.argOff, int32(len(c.argData)))
	}
	c.argsOff = append(c.argsOff, int32(len(c.argOff)-1))
}

// textFull reports whether the batch's text nears the 32-bit offsets' limit.
func (c *goroutineCols) textFull() bool {
	return len(c.argData) >= 1<<30 || len(c.labelData) >= 1<<30
}

// record returns the batch as a record; its buffers are the batch's
// slices, valid until reset.
func (c *goroutineCols) record() arrow.Record {
	n := len(c.goid)
	i64, b := arrow.PrimitiveTypes.Int64, 0
	opt := func(vals []int64) arrow.Array {
		valid, nulls := bitmap(c.bits[b][:0], n, func(i int) bool { return vals[i] != 0 })
		c.bits[b] = valid
		b++
		return i64Array(i64, vals, valid, nulls)
	}
	boolArr := func(vals []bool) arrow.Array {
		bm, _ := bitmap(c.bits[b][:0], n, func(i int) bool { return vals[i] })
		c.bits[b] = bm
		b++
		return fromBuffers(arrow.FixedWidthTypes.Boolean, n, 0, nil, bm)
	}
	argsValid, argNulls := bitmap(c.bits[5][:0], n, func(i int) bool { return !c.argsNull[i] })
	c.bits[5] = argsValid
	cols := []arrow.Array{
		i64Array(schema.Timestamp, c.ts, nil, 0),
		i64Array(i64, c.goid, nil, 0),
		c.state.array(c.stateIdx),
		i64Array(i64, c.wait, nil, 0),
		boolArr(c.locked),
		opt(c.stack),
		opt(c.cgoid),
		c.creator.array(c.creatorIdx),
		opt(c.cst),
		stringArray(c.labelOff, c.labelData),
		boolArr(c.elided),
		c.source.array(c.sourceIdx),
		listArray(argsValid, argNulls, c.argsOff, stringArray(c.argOff, c.argData)),
	}
	rec := array.NewRecord(schema.GoroutinesSchema, cols, int64(n))
	for _, a := range cols {
		a.Release()
	}
	return rec
}

// release releases the dictionaries c shares with its sibling.
func (c *goroutineCols) release() {
	c.state.release()
	c.creator.release()
	c.source.release()
}

// bitmap appends to dst the bitmap of n bits, bit i set when set(i), and
// returns it with the number of bits not set.
func bitmap(dst []byte, n int, set func(int) bool) ([]byte, int) {
	unset := 0
	for i := 0; i < n; i += 8 {
		var bits byte
		for j := i; j < i+8 && j < n; j++ {
			if set(j) {
				bits |= 1 << (j - i)
			} else {
				unset++
			}
		}
		dst = append(dst, bits)
	}
	return dst, unset
}

// fromBuffers makes an array of type t over validity (nil: no nulls)
// and values.
func fromBuffers(t arrow.DataType, n, nulls int, validity, values []byte) arrow.Array {
	var vb *memory.Buffer
	if nulls > 0 {
		vb = memory.NewBufferBytes(validity)
	}
	d := array.NewData(t, n, []*memory.Buffer{vb, memory.NewBufferBytes(values)}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

func i64Array(t arrow.DataType, vals []int64, validity []byte, nulls int) arrow.Array {
	return fromBuffers(t, len(vals), nulls, validity, arrow.Int64Traits.CastToBytes(vals))
}

// stringArray wraps offsets and data as a utf8 array without copying.
func stringArray(offsets []int32, data []byte) arrow.Array {
	d := array.NewData(arrow.BinaryTypes.String, len(offsets)-1,
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes(data)}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// listArray makes the list<string> array of offsets into values (which it
// releases).
func listArray(validity []byte, nulls int, offsets []int32, values arrow.Array) arrow.Array {
	defer values.Release()
	var vb *memory.Buffer
	if nulls > 0 {
		vb = memory.NewBufferBytes(validity)
	}
	d := array.NewData(arrow.ListOf(arrow.BinaryTypes.String), len(offsets)-1,
		[]*memory.Buffer{vb, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets))},
		[]arrow.ArrayData{values.Data()}, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// maxDictValues bounds a dictionary column: past this many values it
// starts afresh with the next batch (each batch carries its dictionary,
// as a delta or a replacement).
const maxDictValues = 1 << 16

// dictCol is the dictionary of a dictionary-encoded string column, which
// grows as new values arrive; its array is rebuilt only when it grew, so
// that consecutive batches share it.
type dictCol struct {
	mem    memory.Allocator
	values []string
	index  map[string]int32
	last   string // the value last looked up, and its id: rows repeat it
	lastID int32
	dict   arrow.Array // nil when stale
}

func newDictCol(mem memory.Allocator) *dictCol {
	return &dictCol{mem: mem, index: map[string]int32{}, lastID: -1}
}

// id returns the index of v, adding it when new.
func (d *dictCol) id(v string) int32 {
	if d.lastID >= 0 && v == d.last {
		return d.lastID
	}
	i, ok := d.index[v]
	if !ok {
		i = int32(len(d.values))
		d.values = append(d.values, v)
		d.index[v] = i
		if d.dict != nil {
			d.dict.Release()
			d.dict = nil
		}
	}
	d.last, d.lastID = v, i
	return i
}

// array returns the dictionary array of idx, and starts the dictionary
// afresh once it is full.
func (d *dictCol) array(idx []int32) arrow.Array {
	if d.dict == nil {
		b := array.NewStringBuilder(d.mem)
		b.AppendValues(d.values, nil)
		d.dict = b.NewArray()
		b.Release()
	}
	ia := fromBuffers(arrow.PrimitiveTypes.Int32, len(idx), 0, nil, arrow.Int32Traits.CastToBytes(idx))
	defer ia.Release()
	a := array.NewDictionaryArray(schema.DictString, ia, d.dict)
	if len(d.values) > maxDictValues {
		d.release()
		*d = *newDictCol(d.mem)
	}
	return a
}

func (d *dictCol) release() {
	if d.dict != nil {
		d.dict.Release()
		d.dict = nil
	}
}
