package dump

import (
	"sync"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// batchWriter writes goroutines batches on a goroutine of its own, so that
// compressing and writing one batch overlaps with reading the goroutines
// of the next. Two batches take turns: the one being filled and the one
// being written.
type batchWriter struct {
	w    *bundle.Writer
	todo chan written
	free chan *goroutineCols
	done chan struct{}

	mu  sync.Mutex
	err error
}

type written struct {
	cols *goroutineCols
	rec  arrow.Record
}

// newBatchWriter starts the writer of batches like first (whose
// dictionaries the second batch shares).
func newBatchWriter(w *bundle.Writer, first *goroutineCols) *batchWriter {
	bw := &batchWriter{w: w, todo: make(chan written, 1), free: make(chan *goroutineCols, 2), done: make(chan struct{})}
	bw.free <- first.sibling()
	go bw.run()
	return bw
}

func (bw *batchWriter) run() {
	defer close(bw.done)
	for b := range bw.todo {
		if bw.failed() == nil {
			if err := bw.write(b.rec); err != nil {
				bw.mu.Lock()
				bw.err = err
				bw.mu.Unlock()
			}
		}
		b.rec.Release()
		b.cols.reset()
		bw.free <- b.cols
	}
}

// write writes rec after the stacks and frames its rows refer to.
func (bw *batchWriter) write(rec arrow.Record) error {
	if err := bw.w.Flush(); err != nil {
		return err
	}
	return bw.w.WriteRecord(schema.TableGoroutines, rec)
}

func (bw *batchWriter) failed() error {
	bw.mu.Lock()
	defer bw.mu.Unlock()
	return bw.err
}

// send hands c's rows to the writer and returns an empty batch to fill
// next, or the error that stopped the writer.
func (bw *batchWriter) send(c *goroutineCols) (*goroutineCols, error) {
	if err := bw.failed(); err != nil {
		return c, err
	}
	bw.todo <- written{cols: c, rec: c.record()}
	return <-bw.free, nil
}

// close waits for every batch to be written and returns the first error.
func (bw *batchWriter) close() error {
	close(bw.todo)
	<-bw.done
	return bw.failed()
}
