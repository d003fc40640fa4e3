package gotrace

import (
	"fmt"
	"io"
	"runtime"

	"golang.org/x/exp/trace"
)

// The parser is the slowest stage of ingest and does the same work as
// bare reading, so it runs on a goroutine of its own that only copies
// x/exp/trace's events into batches, generation after generation, while
// another goroutine reduces them (decoder). x/exp/trace reads a
// generation's batches and builds its tables on the generation's first
// ReadEvent; with one worker, an opener goroutine does that for the next
// generation while the parser reads the end of this one (openAhead), so
// that the parser goes from one generation's last event straight to the
// next one's first.

// evBatch is a run of one generation's events, in trace order. The last
// batch of a generation has end set and err saying why its parse stopped
// (nil at its end).
type evBatch struct {
	c   *chunk
	evs []trace.Event
	end bool
	err error
}

// evBatchLen is how many events the parser hands over at once (2.5 MB).
// A handover may wake the reducer on the other CPU, which costs the
// parser more than copying the events: on a 2-CPU virtual machine the
// parser kept 0.69 of bare reading's rate with batches of 4096 events
// and 0.81 with batches of 32768 (docs/PERF.md).
const evBatchLen = 32 * 1024

// evBatchesQueued is how many full batches may wait for the reducer, and
// how many emptied ones wait for reuse: with the one being filled and the
// one being reduced, at most four batches (10 MB) are alive.
const evBatchesQueued = 1

// cueAt is the share of a generation's events, estimated from the
// generation before, after which the next generation is opened: late
// enough that the two generations' parser state overlap only briefly,
// early enough that the next one is ready when this one ends (opening
// takes about a sixth of parsing). firstPerByte is the events per byte
// assumed for the first generation: low, so the second is opened in time.
const (
	cueAt        = 0.8
	firstPerByte = 0.1
)

// collectAfter is the size of a generation after whose parse a garbage
// collection is started. x/exp/trace holds a generation's batches until
// its last event, and the next generation is opened before that, so the
// live heap holds two generations for a moment; a collection then (the
// next one's allocations start it) sets the heap goal to twice that, and
// the process grows to it. Collecting as soon as the first generation is
// let go sets the goal from what stays: on a span-heavy 200 MB trace
// paced at 8 MB a second, peak RSS 96-101 MB instead of 114-119 (bare
// reading: 86-89), at the same CPU time. Smaller generations overlap by
// too little to matter, and a collection per generation of a long trace
// of small ones would cost more than it saves.
const collectAfter = 4 << 20

// parser parses the generations it is given, one after another, and
// hands their events to one reducer.
type parser struct {
	f    *framer
	out  chan evBatch
	free chan []trace.Event
	quit <-chan struct{}

	// cue, when generations are opened ahead, tells the opener to open
	// the next one; each generation sends it once. perByte is the events
	// per byte of the last generation parsed.
	cue     chan struct{}
	perByte float64
}

// opened is a generation whose reader has read its first event, and with
// it the generation's batches and tables; err says why that read failed
// (io.EOF: the generation has no event).
type opened struct {
	c     *chunk
	tr    *trace.Reader
	first trace.Event
	err   error
}

// startParser parses the chunks of in on a new goroutine and returns the
// channel of their event batches, closed after the last chunk (or once
// quit is closed). Each chunk's batches end with one that has end set.
// With ahead set, the next chunk is opened on a goroutine of its own
// while the parser reads the last fifth of the one before (see cueAt).
func startParser(f *framer, in <-chan *chunk, quit <-chan struct{}, ahead bool) *parser {
	p := &parser{f: f, out: make(chan evBatch, evBatchesQueued), free: make(chan []trace.Event, evBatchesQueued), quit: quit}
	next := func() (opened, bool) {
		c, ok := <-in
		if !ok {
			return opened{}, false
		}
		return openGen(f, c), true
	}
	if ahead {
		p.cue, p.perByte = make(chan struct{}, 1), firstPerByte
		ch := openAhead(f, in, quit, p.cue)
		next = func() (opened, bool) { o, ok := <-ch; return o, ok }
	}
	go func() {
		defer close(p.out)
		for o, ok := next(); ok; o, ok = next() {
			err := p.parse(o)
			c := o.c
			if o = (opened{}); c.end-c.off >= collectAfter {
				// The generation's parser state is garbage now: collect it
				// before the heap goal is set from a heap that held it
				// beside the next one, opened ahead (see collectAfter).
				go runtime.GC()
			}
			if !p.send(evBatch{c: c, end: true, err: err}) {
				return
			}
		}
	}()
	return p
}

// openAhead opens the chunks of in, in order, on a new goroutine: the
// first at once, each later one when cue says so. The channel it returns
// holds none, so that at most one opened generation waits for the
// parser; it is closed after the last chunk, or once quit is closed.
func openAhead(f *framer, in <-chan *chunk, quit, cue <-chan struct{}) <-chan opened {
	out := make(chan opened)
	go func() {
		defer close(out)
		first := true
		for c := range in {
			if !first {
				select {
				case <-cue:
				case <-quit:
					return
				}
			}
			first = false
			select {
			case out <- openGen(f, c):
			case <-quit:
				return
			}
		}
	}()
	return out
}

// openGen starts reading chunk c as a standalone trace and reads its
// first event. A panic in the parser is returned as an error.
func openGen(f *framer, c *chunk) (o opened) {
	o.c = c
	defer func() {
		if r := recover(); r != nil {
			o.tr, o.err = nil, fmt.Errorf("trace parser failed: %v", r)
		}
	}()
	if o.tr, o.err = trace.NewReader(f.open(c)); o.err == nil {
		o.first, o.err = o.tr.ReadEvent()
	}
	return o
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

// cuer sends a generation's cue (see parser.cue) once due events have
// been handed over, or when the generation's parse ends.
type cuer struct {
	p    *parser
	due  int
	sent int
	done bool
}

// newCuer starts the cue of generation c.
func (p *parser) newCuer(c *chunk) *cuer {
	q := &cuer{p: p, done: p.cue == nil}
	q.due = int(cueAt * p.perByte * float64(c.end-c.off))
	return q
}

// handed counts n more events handed over.
func (q *cuer) handed(n int) {
	if q.sent += n; !q.done && q.sent >= q.due {
		q.send()
	}
}

// end sends the cue if it is not sent yet and learns the generation's
// events per byte.
func (q *cuer) end(c *chunk) {
	if !q.done {
		q.send()
	}
	if n := c.end - c.off; n > 0 && q.p.cue != nil {
		q.p.perByte = float64(q.sent) / float64(n)
	}
}

// send cues the opener; the channel has room, since the opener took the
// cue of the generation before before this one was opened.
func (q *cuer) send() {
	q.done = true
	q.p.cue <- struct{}{}
}

// parse reads the rest of the opened generation o and sends its events,
// the first included. A panic in the parser is returned as an error.
func (p *parser) parse(o opened) (err error) {
	q := p.newCuer(o.c)
	defer q.end(o.c)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("trace parser failed: %v", r)
		}
	}()
	if o.err != nil {
		if o.err == io.EOF {
			return nil
		}
		return o.err
	}
	b := append(p.batch(), o.first)
	for {
		ev, err := o.tr.ReadEvent()
		if err != nil {
			if len(b) > 0 && !p.send(evBatch{c: o.c, evs: b}) {
				return nil
			}
			q.handed(len(b))
			if err == io.EOF {
				return nil
			}
			return err
		}
		if b = append(b, ev); len(b) == evBatchLen {
			if !p.send(evBatch{c: o.c, evs: b}) {
				return nil
			}
			q.handed(len(b))
			b = p.batch()
		}
	}
}
