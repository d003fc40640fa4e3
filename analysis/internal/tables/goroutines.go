package tables

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// GoroutineCols are the columns of one batch of the goroutines table (the
// dumps' goroutines, one row per goroutine and snapshot), each a reader
// by row. Strings point into Arrow memory; a missing column reads as
// zero.
type GoroutineCols struct {
	Rows                                 int
	SnapshotTS, Goid, WaitMinutes, Stack func(int) int64
	CreatorGoid, CreatorStack            func(int) int64
	State, CreatorFunction, Labels       func(int) string
	// FrameArgs calls fn with each frame's printed arguments of row r.
	FrameArgs func(r int, fn func(i int, s string))
}

// ReadGoroutines calls each with every batch of the goroutines table, in
// the table's order. The error is the bundle's, a *bundle.PartialError
// for a table cut short (see bundle.Tolerate).
func ReadGoroutines(b *bundle.Bundle, mem memory.Allocator, each func(GoroutineCols)) error {
	return b.ReadTable(schema.TableGoroutines, mem, func(rec arrow.Record) error {
		c := cols{rec: rec}
		each(GoroutineCols{
			Rows:       int(rec.NumRows()),
			SnapshotTS: c.i64(schema.ColSnapshotTS), Goid: c.i64(schema.ColGoid),
			WaitMinutes: c.i64(schema.ColWaitMinutes), Stack: c.i64(schema.ColStackID),
			CreatorGoid: c.i64(schema.ColCreatorGoid), CreatorStack: c.i64(schema.ColCreatorStackID),
			State: c.str(schema.ColState), CreatorFunction: c.str(schema.ColCreatorFunction),
			Labels: c.str(schema.ColLabels), FrameArgs: c.strLists(schema.ColFrameArgs),
		})
		return nil
	})
}
