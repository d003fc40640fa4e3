package gotrace

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/leakscope/leakscope/ingest/schema"
)

// spanCols builds spans batches column by column, like goroutineCols: a
// busy program logs and opens regions by the million, and appending them
// row by row through the bundle writer cost more than building them here.
type spanCols struct {
	mem                      memory.Allocator
	id, parent, goid, taskID *array.Int64Builder
	start, end               *array.TimestampBuilder
	message                  *array.StringBuilder
	kind, name               *dictCol
	n                        int
}

// maxSpanNames bounds the name dictionary: names are the program's own
// region types and log categories, usually few, but nothing stops a
// program from making them unique. Past this many values the dictionary
// starts afresh with the next batch (each batch carries its dictionary).
const maxSpanNames = 1 << 16

func newSpanCols(mem memory.Allocator) *spanCols {
	return &spanCols{
		mem:     mem,
		id:      array.NewInt64Builder(mem),
		parent:  array.NewInt64Builder(mem),
		goid:    array.NewInt64Builder(mem),
		taskID:  array.NewInt64Builder(mem),
		start:   array.NewTimestampBuilder(mem, schema.Timestamp),
		end:     array.NewTimestampBuilder(mem, schema.Timestamp),
		message: array.NewStringBuilder(mem),
		kind:    newDictCol(mem, schema.SpanTask, schema.SpanRegion, schema.SpanLog),
		name:    newDictCol(mem, ""),
	}
}

func (c *spanCols) append(s *schema.Span) {
	c.id.Append(s.ID)
	optInt64(c.parent, s.ParentID)
	c.kind.append(s.Kind)
	c.name.append(s.Name)
	optInt64(c.goid, s.Goid)
	optInt64(c.taskID, s.TaskID)
	optTime(c.start, s.StartTS)
	optTime(c.end, s.EndTS)
	c.message.Append(s.Message)
	c.n++
}

func (c *spanCols) len() int { return c.n }

func (c *spanCols) record() (arrow.Record, error) {
	n := c.n
	c.n = 0
	rec, err := assemble(c.mem, schema.SpansSchema, n, map[string]arrow.Array{
		schema.ColSpanID:       c.id.NewArray(),
		schema.ColParentSpanID: c.parent.NewArray(),
		schema.ColKind:         c.kind.array(),
		schema.ColName:         c.name.array(),
		schema.ColGoid:         c.goid.NewArray(),
		schema.ColTaskID:       c.taskID.NewArray(),
		schema.ColStartTS:      c.start.NewArray(),
		schema.ColEndTS:        c.end.NewArray(),
		schema.ColMessage:      c.message.NewArray(),
	})
	if len(c.name.values) > maxSpanNames {
		c.name.release()
		c.name = newDictCol(c.mem, "")
	}
	return rec, err
}

func (c *spanCols) release() {
	for _, b := range []interface{ Release() }{c.id, c.parent, c.goid, c.taskID, c.start, c.end, c.message} {
		b.Release()
	}
	c.kind.release()
	c.name.release()
}
