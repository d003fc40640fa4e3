package gotrace

import (
	"fmt"
	"io"

	"golang.org/x/exp/trace"
)

// The parser is the slowest stage of ingest and does the same work as
// bare reading, so it runs on a goroutine of its own that only copies
// x/exp/trace's events into batches, generation after generation, while
// another goroutine reduces them (decoder). It goes on to the next
// generation as soon as it has read the last event of one, so that the
// reduction of one generation's tail overlaps with the parse of the next
// one's tables. Copying each event and handing the batches over keep one
// parser under about 0.88 of bare reading's event rate (docs/DESIGN.md).

// evBatch is a run of one generation's events, in trace order. The last
// batch of a generation has end set and err saying why its parse stopped
// (nil at its end).
type evBatch struct {
	c   *chunk
	evs []trace.Event
	end bool
	err error
}

// evBatchLen is how many events the parsing goroutine hands over at once:
// each handover may wake the other goroutine (4096 rather than 1024 halves
// ingest's context switches).
const evBatchLen = 4096

// parser parses the generations it is given, one after another, and
// hands their events to one reducer.
type parser struct {
	f    *framer
	out  chan evBatch
	free chan []trace.Event
	quit <-chan struct{}
}

// startParser parses the chunks of in on a new goroutine and returns the
// channel of their event batches, closed after the last chunk (or once
// quit is closed). Each chunk's batches end with one that has end set.
func startParser(f *framer, in <-chan *chunk, quit <-chan struct{}) *parser {
	p := &parser{f: f, out: make(chan evBatch, 4), free: make(chan []trace.Event, 8), quit: quit}
	go func() {
		defer close(p.out)
		for c := range in {
			err := p.parse(c)
			if !p.send(evBatch{c: c, end: true, err: err}) {
				return
			}
		}
	}()
	return p
}

// recycle takes back a batch's events once they are reduced.
func (p *parser) recycle(evs []trace.Event) {
	select {
	case p.free <- evs[:0]:
	default:
	}
}

// send hands b over, unless quit is closed first.
func (p *parser) send(b evBatch) bool {
	select {
	case p.out <- b:
		return true
	case <-p.quit:
		return false
	}
}

// batch returns an empty batch, a recycled one if any.
func (p *parser) batch() []trace.Event {
	select {
	case b := <-p.free:
		return b
	default:
		return make([]trace.Event, 0, evBatchLen)
	}
}

// parse reads generation c as a standalone trace and sends its events.
// A panic in the parser is returned as an error.
func (p *parser) parse(c *chunk) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("trace parser failed: %v", r)
		}
	}()
	tr, err := trace.NewReader(p.f.open(c))
	if err != nil {
		return err
	}
	b := p.batch()
	for {
		ev, err := tr.ReadEvent()
		if err != nil {
			if len(b) > 0 && !p.send(evBatch{c: c, evs: b}) {
				return nil
			}
			if err == io.EOF {
				return nil
			}
			return err
		}
		if b = append(b, ev); len(b) == evBatchLen {
			if !p.send(evBatch{c: c, evs: b}) {
				return nil
			}
			b = p.batch()
		}
	}
}
