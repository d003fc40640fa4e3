package gotrace

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/leakscope/leakscope/ingest/schema"
)

// spanCols builds spans batches in plain Go slices, like goroutineCols: a
// busy program opens tasks and regions and logs by the million, and
// builders appending value by value (and growing as they go) cost more
// than slices that become the record's buffers without a copy. Null ids
// and times are 0 and get a validity bitmap. A batch's slices go back to
// the pool once the sink has written its record.
type spanCols struct {
	mem        memory.Allocator
	cur        *spanBatch
	pool       chan *spanBatch
	kind, name *dictCol
}

type spanBatch struct {
	id, parent, goid, task, start, end []int64
	kind, name                         []int32
	msgOffsets                         []int32 // len(rows)+1 offsets into msgData
	msgData                            []byte
	valid                              [5][]byte
}

// maxSpanNames bounds the name dictionary: names are the program's own
// region types and log categories, usually few, but nothing stops a
// program from making them unique. Past this many values the dictionary
// starts afresh with the next batch (each batch carries its dictionary).
const maxSpanNames = 1 << 16

func newSpanBatch() *spanBatch {
	n := spanBatchRows
	return &spanBatch{
		id: make([]int64, 0, n), parent: make([]int64, 0, n), goid: make([]int64, 0, n),
		task: make([]int64, 0, n), start: make([]int64, 0, n), end: make([]int64, 0, n),
		kind: make([]int32, 0, n), name: make([]int32, 0, n),
		msgOffsets: append(make([]int32, 0, n+1), 0),
	}
}

func (b *spanBatch) reset() {
	b.id, b.parent, b.goid, b.task, b.start, b.end = b.id[:0], b.parent[:0], b.goid[:0], b.task[:0], b.start[:0], b.end[:0]
	b.kind, b.name = b.kind[:0], b.name[:0]
	b.msgOffsets, b.msgData = append(b.msgOffsets[:0], 0), b.msgData[:0]
}

func newSpanCols(mem memory.Allocator) *spanCols {
	return &spanCols{
		mem:  mem,
		cur:  newSpanBatch(),
		pool: make(chan *spanBatch, 2),
		kind: newDictCol(mem, schema.SpanTask, schema.SpanRegion, schema.SpanLog),
		name: newDictCol(mem, ""),
	}
}

func (c *spanCols) append(s *schema.Span) {
	b := c.cur
	b.id = append(b.id, s.ID)
	b.parent = append(b.parent, s.ParentID)
	b.goid = append(b.goid, s.Goid)
	b.task = append(b.task, s.TaskID)
	b.start = append(b.start, s.StartTS)
	b.end = append(b.end, s.EndTS)
	b.kind = append(b.kind, c.kindID(s.Kind))
	b.name = append(b.name, c.name.id(s.Name))
	b.msgData = append(b.msgData, s.Message...)
	b.msgOffsets = append(b.msgOffsets, int32(len(b.msgData)))
}

// kindID is the dictionary index of a span kind: the three kinds are the
// dictionary's first values.
func (c *spanCols) kindID(k string) int32 {
	switch k {
	case schema.SpanTask:
		return 0
	case schema.SpanRegion:
		return 1
	case schema.SpanLog:
		return 2
	}
	return c.kind.id(k)
}

func (c *spanCols) len() int { return len(c.cur.id) }

// record turns the current batch into a record and starts a new batch;
// recycle must be called with the returned batch once the record has been
// written and released.
func (c *spanCols) record() (arrow.Record, *spanBatch, error) {
	b := c.cur
	select {
	case c.cur = <-c.pool:
		c.cur.reset()
	default:
		c.cur = newSpanBatch()
	}
	opt := func(i int, t arrow.DataType, vals []int64) arrow.Array {
		var nulls int
		b.valid[i], nulls = validity(b.valid[i][:0], vals)
		return i64Array(t, vals, b.valid[i], nulls)
	}
	i64 := arrow.PrimitiveTypes.Int64
	rec, err := assemble(c.mem, schema.SpansSchema, len(b.id), map[string]arrow.Array{
		schema.ColSpanID:       i64Array(i64, b.id, nil, 0),
		schema.ColParentSpanID: opt(0, i64, b.parent),
		schema.ColKind:         dictArray(c.kind, b.kind),
		schema.ColName:         dictArray(c.name, b.name),
		schema.ColGoid:         opt(1, i64, b.goid),
		schema.ColTaskID:       opt(2, i64, b.task),
		schema.ColStartTS:      opt(3, schema.Timestamp, b.start),
		schema.ColEndTS:        opt(4, schema.Timestamp, b.end),
		schema.ColMessage:      stringArray(b.msgOffsets, b.msgData),
	})
	if len(c.name.values) > maxSpanNames {
		c.name.release()
		c.name = newDictCol(c.mem, "")
	}
	return rec, b, err
}

// recycle returns a written batch's slices for reuse.
func (c *spanCols) recycle(b *spanBatch) {
	select {
	case c.pool <- b:
	default:
	}
}

func (c *spanCols) release() {
	c.kind.release()
	c.name.release()
}

// stringArray wraps offsets and data as a utf8 array without copying.
func stringArray(offsets []int32, data []byte) arrow.Array {
	d := array.NewData(arrow.BinaryTypes.String, len(offsets)-1,
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes(data)}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}
