package bundle

import (
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
)

// A table's batches are read, decompressed and decoded one batch ahead of
// the caller's function, on a goroutine of their own: LZ4 and the delta
// columns' decoding then run on another CPU while the caller works
// through the batch before (docs/DESIGN.md, on reading a table).

// ahead is a batch read ahead of its call: decoded and retained, or why
// reading stopped, or the panic the reading raised.
type ahead struct {
	rec      arrow.Record
	err      error
	panicked any
}

// readAhead reads the batches of rd, each checked and decoded by dc (when
// not nil), on a new goroutine, one batch ahead of whoever receives them.
// A batch that fails its check ends the reading with an error naming the
// batch, after msgs records it as corrupt.
type readAhead struct {
	ch   chan ahead
	quit chan struct{}
}

func startReadAhead(rd *ipc.Reader, dc *deltaCodec, msgs *messages) *readAhead {
	ra := &readAhead{ch: make(chan ahead, 1), quit: make(chan struct{})}
	go ra.run(rd, dc, msgs)
	return ra
}

func (ra *readAhead) run(rd *ipc.Reader, dc *deltaCodec, msgs *messages) {
	defer close(ra.ch)
	defer func() {
		if r := recover(); r != nil {
			ra.send(ahead{panicked: r})
		}
	}()
	for n := 1; rd.Next(); n++ {
		rec := rd.Record()
		if err := checkRecord(rec); err != nil {
			msgs.corrupt = err
			ra.send(ahead{err: fmt.Errorf("batch %d: %w", n, err)})
			return
		}
		if !ra.send(ahead{rec: decoded(dc, rec)}) {
			return
		}
	}
	if err := rd.Err(); err != nil {
		ra.send(ahead{err: err})
	}
}

// decoded returns rec decoded by dc (when not nil), retained past the
// reader's next batch.
func decoded(dc *deltaCodec, rec arrow.Record) arrow.Record {
	if dc == nil {
		rec.Retain()
		return rec
	}
	return dc.decode(rec)
}

// send hands a over, unless stop was called first.
func (ra *readAhead) send(a ahead) bool {
	select {
	case ra.ch <- a:
		return true
	case <-ra.quit:
		if a.rec != nil {
			a.rec.Release()
		}
		return false
	}
}

// next returns the next batch, or why reading stopped; neither after the
// last batch. A panic of the reading is raised again here.
func (ra *readAhead) next() (arrow.Record, error) {
	a := <-ra.ch
	if a.panicked != nil {
		panic(a.panicked)
	}
	return a.rec, a.err
}

// stop ends the reading and releases what was read ahead; once it
// returns, the reading goroutine is done with the reader.
func (ra *readAhead) stop() {
	close(ra.quit)
	for a := range ra.ch {
		if a.rec != nil {
			a.rec.Release()
		}
	}
}
