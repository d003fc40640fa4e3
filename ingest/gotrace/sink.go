package gotrace

import (
	"sync/atomic"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// sink writes finished record batches to the bundle on its own goroutine,
// so that compressing them overlaps with reading the trace. Its channel
// holds two batches, so that the handler does not wait while one is
// compressed (and the parser, in turn, on the handler).
type sink struct {
	w *bundle.Writer
	// bundle stack id of each local stack id (index), see stackCache
	stackIDs []int64
	ch       chan tableRecord
	done     chan struct{}
	err      error
	failed   atomic.Bool
}

type tableRecord struct {
	rows  []schema.Row // rows to append one by one (low-volume tables)
	table string
	rec   arrow.Record
	done  func() // called once rec is written and released, may be nil
	// stacks holds the frames of the local stack ids assigned since the
	// previous item; they are interned before rec is written.
	stacks [][]bundle.StackFrame
}

func newSink(w *bundle.Writer) *sink {
	s := &sink{w: w, ch: make(chan tableRecord, 2), done: make(chan struct{}), stackIDs: []int64{0}}
	go s.run()
	return s
}

func (s *sink) run() {
	defer close(s.done)
	for tr := range s.ch {
		for _, frames := range tr.stacks {
			var id int64
			if s.err == nil {
				id, s.err = s.w.StackID(frames)
			}
			s.stackIDs = append(s.stackIDs, id)
		}
		for _, r := range tr.rows {
			if s.err == nil {
				s.err = s.w.Append(r)
			}
		}
		if tr.rec == nil {
			if s.err != nil {
				s.failed.Store(true)
			}
			continue
		}
		s.resolveStacks(tr.rec)
		if s.err == nil && len(tr.stacks) > 0 {
			// Flush first so that the stacks and frames the batch refers
			// to are on disk before it.
			s.err = s.w.Flush()
		}
		if s.err == nil {
			s.err = s.w.WriteRecord(tr.table, tr.rec)
		}
		if s.err != nil {
			s.failed.Store(true)
		}
		tr.rec.Release()
		if tr.done != nil {
			tr.done()
		}
	}
}

// stackColumns are the columns that hold stack ids.
var stackColumns = map[string]bool{
	schema.ColStackID:         true,
	schema.ColCreationStackID: true,
	schema.ColLastStackID:     true,
}

// resolveStacks replaces local stack ids by bundle stack ids, in place:
// the sink owns the record and nothing else reads it yet.
func (s *sink) resolveStacks(rec arrow.Record) {
	for i, f := range rec.Schema().Fields() {
		if !stackColumns[f.Name] {
			continue
		}
		col, ok := rec.Column(i).(*array.Int64)
		if !ok {
			continue
		}
		vals := col.Int64Values()
		for j, v := range vals {
			if v > 0 && v < int64(len(s.stackIDs)) {
				vals[j] = s.stackIDs[v]
			}
		}
	}
}

// write hands rec (ownership included) and the frames of new local stacks
// to the sink goroutine, which calls done (on its own goroutine) once rec
// is written.
func (s *sink) write(table string, rec arrow.Record, done func(), stacks [][]bundle.StackFrame) {
	s.ch <- tableRecord{table: table, rec: rec, done: done, stacks: stacks}
}

// intern hands the frames of new local stacks to the sink goroutine.
func (s *sink) intern(stacks [][]bundle.StackFrame) { s.ch <- tableRecord{stacks: stacks} }

// append hands rows to the sink goroutine, which appends them to their
// tables.
func (s *sink) append(rows []schema.Row) { s.ch <- tableRecord{rows: rows} }

// close waits for every batch to be written and returns the first error.
func (s *sink) close() error {
	close(s.ch)
	<-s.done
	return s.err
}
