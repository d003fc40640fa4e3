package dump

import (
	"bufio"
	"bytes"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// Parallel reading. A splitter goroutine reads the input in chunks of
// whole lines, cut where a goroutine block starts at the beginning of a
// line after a blank one ("\n\ngoroutine "), or, with no such place in
// maxCarry bytes, after the last line, and hands each chunk to one of
// several parser workers, each a Reader of its own that parses the chunk
// from a fresh state. The reader returns the workers' goroutines chunk by
// chunk in input order and adds up their tallies; every line number and
// byte offset is the input's, as the splitter counts them. A chunk the
// reader needs before any worker took it the reader parses itself, as a
// worker would: it does not sleep while the workers are busy or off the
// CPUs.
//
// A chunk parsed from a fresh state is parsed as the sequential reader
// would parse it when the state before it was at rest: no block open on
// any stream, no race report open, no split log line waiting for its end.
// The first chunk starts at the start of the input; each worker tells
// whether its parse ended at rest, so the state before the next chunk is
// known. When a chunk did not end at rest (a cut fell inside an indented
// block, a container log's record, a race report), held a line longer than
// the read buffer, or could not be cut (no line ends in it), the reader
// reads on itself, sequentially, from that chunk's start, until it is at
// rest at the end of a chunk, and takes the workers' parse of the next
// one; after seqRunMax chunks in a row it stops the workers and reads the
// rest itself. The end of the input is always read by the reader itself,
// so truncation is judged as Reader.finish judges it. The result is the
// sequential reader's, byte for byte, in every case.

// readOptions chooses how a Reader reads.
type readOptions struct {
	workers  int // parser workers; below 2, none
	chunk    int // bytes read for each chunk
	maxCarry int // longest part of a chunk carried over to the next
}

// ingestOptions are the read options of Ingest: a worker per CPU.
func ingestOptions() readOptions {
	return readOptions{workers: runtime.GOMAXPROCS(0), chunk: 1 << 20, maxCarry: 4 << 20}
}

// newReader returns a reader of r with options o; one with workers must
// be stopped (Reader.stop).
func newReader(r io.Reader, o readOptions) *Reader {
	if o.workers < 2 {
		return NewReader(r)
	}
	rd := &Reader{lr: &lineReader{}, names: make(map[string]string)}
	rd.par = startParallel(r, o)
	return rd
}

// stop stops the parser workers and the splitter and waits for them:
// after it, r's input is no longer read.
func (r *Reader) stop() {
	if r.par != nil {
		r.par.stop()
	}
}

// chunk is a part of the input, whole lines, and what a worker made of it.
type chunk struct {
	buf    []byte
	line   int   // lines before it
	off    int64 // bytes before it
	parsed bool  // handed to the workers; done is closed once it is parsed
	err    error // io.EOF or the read error after buf: the last chunk
	done   chan struct{}
	taken  atomic.Bool // a worker or the reader took it to parse

	gs     []Goroutine
	frames []Frame
	fends  []int // where each goroutine's frames end in frames
	t      tally
	rest   bool // parsed, and the parse ended at rest
	lines  int  // lines read
}

// parallel is a Reader's splitter and parser workers.
type parallel struct {
	src      io.Reader
	o        readOptions
	pool     chan *chunk // chunks free for the splitter; bounds those in flight
	work     chan *chunk // for the workers
	order    chan *chunk // every chunk in input order, for the reader
	quit     chan struct{}
	seqAhead atomic.Bool // the reader reads sequentially: stop parsing
	wg       sync.WaitGroup

	helper *Reader     // parses a chunk no worker has taken yet, for the reader
	cur    *chunk      // chunk whose goroutines are being returned
	i      int         // next of them
	seq    bool        // the reader reads on itself, from stream
	stream chunkStream // what the reader reads itself
	seqRun int         // chunks the reader read itself since it last took the workers'
	merged int         // chunks whose workers' parse was taken
}

// seqRunMax is how many chunks in a row the reader reads itself before
// it stops the workers and reads the rest of the input itself.
const seqRunMax = 8

func startParallel(src io.Reader, o readOptions) *parallel {
	n := 2*o.workers + 2
	p := &parallel{src: src, o: o, pool: make(chan *chunk, n), work: make(chan *chunk, n),
		order: make(chan *chunk, n), quit: make(chan struct{})}
	for i := 0; i < n; i++ {
		p.pool <- &chunk{}
	}
	p.wg.Add(1 + o.workers)
	go p.split()
	for i := 0; i < o.workers; i++ {
		go p.worker()
	}
	return p
}

func (p *parallel) stop() {
	close(p.quit)
	p.seqAhead.Store(true)
	p.wg.Wait()
}

// next returns the next goroutine the workers parsed, or nil once the
// reader has to read the rest itself: r.lr then reads it.
func (p *parallel) next(r *Reader) *Goroutine {
	for !p.seq {
		if c := p.cur; c != nil {
			if p.i < len(c.gs) {
				p.i++
				return &c.gs[p.i-1]
			}
			p.recycle(c)
			p.cur = nil
		}
		c, ok := <-p.order
		if ok && c.parsed {
			p.wait(c)
		}
		if ok && c.rest {
			r.tally.add(&c.t)
			p.merged++
			r.lr.num = c.line + c.lines
			r.lr.bytes = c.off + int64(len(c.buf))
			p.cur, p.i = c, 0
			continue
		}
		p.seq = true
		if !ok {
			c = nil
		}
		p.stream = chunkStream{p: p, cur: c}
		if r.lr.br == nil {
			r.lr.br = bufio.NewReaderSize(&p.stream, readBuf)
		} else {
			r.lr.br.Reset(&p.stream)
		}
	}
	return nil
}

// resume reports whether the reader, reading on itself, has come to the
// end of a chunk at rest, so that the workers' parse of the next chunk
// holds: the reader then takes it (next).
func (p *parallel) resume(r *Reader) bool {
	s := &p.stream
	if !p.seq || s.cur == nil || s.at < len(s.cur.buf) || s.cur.err != nil || r.lr.br.Buffered() > 0 || !r.atRest() {
		return false
	}
	p.recycle(s.cur)
	s.cur = nil
	p.seq, p.seqRun = false, 0
	return true
}

// wait waits for c's parse, or parses it itself when no worker has
// taken it yet (they are busy, or the machine's CPUs are), rather than
// sleep until one does.
func (p *parallel) wait(c *chunk) {
	if c.taken.CompareAndSwap(false, true) {
		if p.helper == nil {
			p.helper = newChunkReader()
		}
		c.rest = false
		if !p.seqAhead.Load() {
			p.helper.parseChunk(c)
		}
		close(c.done)
	}
	<-c.done
}

// recycle gives c back to the splitter once no worker reads it.
func (p *parallel) recycle(c *chunk) {
	if c.parsed {
		<-c.done
	}
	p.pool <- c
}

// chunkStream is the rest of the input, from chunk cur on, for the
// reader reading sequentially.
type chunkStream struct {
	p   *parallel
	cur *chunk
	at  int
}

func (s *chunkStream) Read(b []byte) (int, error) {
	for s.cur == nil || s.at == len(s.cur.buf) {
		if s.cur != nil {
			if s.cur.err != nil {
				return 0, s.cur.err
			}
			s.p.recycle(s.cur)
			if s.p.seqRun++; s.p.seqRun == seqRunMax {
				s.p.seqAhead.Store(true)
			}
		}
		c, ok := <-s.p.order
		if !ok {
			s.cur = nil
			return 0, io.EOF
		}
		s.cur, s.at = c, 0
	}
	n := copy(b, s.cur.buf[s.at:])
	s.at += n
	return n, nil
}

// worker parses chunks with a Reader of its own, whose names stay
// interned from chunk to chunk.
func (p *parallel) worker() {
	defer p.wg.Done()
	wr := newChunkReader()
	for c := range p.work {
		if !c.taken.CompareAndSwap(false, true) {
			continue // the reader parses it
		}
		c.rest = false
		if !p.seqAhead.Load() {
			wr.parseChunk(c)
		}
		close(c.done)
	}
}

// newChunkReader returns a reader for parseChunk.
func newChunkReader() *Reader {
	return &Reader{lr: &lineReader{}, names: make(map[string]string)}
}

// parseChunk parses c from a fresh state into c's goroutines and tally,
// and reports in c.rest whether it ended at rest.
func (r *Reader) parseChunk(c *chunk) {
	r.lr.chunk, r.lr.at, r.lr.num, r.lr.bytes = c.buf, 0, c.line, c.off
	r.tally = tally{}
	c.gs, c.frames, c.fends = c.gs[:0], c.frames[:0], c.fends[:0]
	var err error
	for {
		var ln logLine
		if ln, err = r.lr.next(); err != nil {
			break
		}
		if g := r.stream(ln.stream).feed(ln); g != nil {
			r.count++
			c.gs = append(c.gs, *g)
			c.frames = append(c.frames, g.Frames...)
			c.fends = append(c.fends, len(c.frames))
		}
	}
	c.rest = err == io.EOF && r.atRest()
	if !c.rest {
		r.streams = [numStreams]*blocks{}
		r.lr.pending = [numStreams][]byte{}
	}
	c.t, r.races = r.tally, nil
	c.lines = r.lr.num - c.line
	from := 0
	for i := range c.gs {
		g, to := &c.gs[i], c.fends[i]
		g.Frames, from = c.frames[from:to:to], to
		if g.CreatedBy != nil {
			g.CreatedBy = &g.createdBy
		}
	}
}

// atRest reports whether r's state is one a fresh reader would have: no
// block or race report open, no split line pending.
func (r *Reader) atRest() bool {
	for s, p := range r.streams {
		if r.lr.pending[s] != nil || p != nil && (p.in || p.race.active) {
			return false
		}
	}
	return true
}

// split reads the input into chunks for the workers (see the top of the
// file), and the rest unparsed once a chunk cannot be cut or the reader
// reads sequentially.
func (p *parallel) split() {
	defer p.wg.Done()
	defer close(p.work)
	defer close(p.order)
	var carry []byte
	line, off := 0, int64(0)
	seq := false
	for {
		var c *chunk
		select {
		case c = <-p.pool:
		case <-p.quit:
			return
		}
		c.buf = append(c.buf[:0], carry...)
		c.parsed, c.rest = false, false
		cut := 0
		for searched := len(carry); cut == 0; searched = len(c.buf) {
			if c.err = fill(p.src, &c.buf, len(c.buf)+p.o.chunk); c.err != nil || seq || p.seqAhead.Load() {
				break
			}
			cut = p.cut(c.buf, searched)
		}
		if cut > 0 {
			carry = append(carry[:0], c.buf[cut:]...)
			c.buf = c.buf[:cut]
		} else {
			// The end of the input, a chunk that cannot be cut, or the
			// reader reads the rest on its own: the chunk goes unparsed.
			carry = carry[:0]
			seq = seq || c.err != nil || p.seqAhead.Load()
		}
		c.line, c.off = line, off
		line += bytes.Count(c.buf, newline)
		off += int64(len(c.buf))
		if cut > 0 {
			c.parsed, c.done = true, make(chan struct{})
			c.taken.Store(false)
		}
		p.order <- c
		if c.parsed {
			p.work <- c
		}
		if c.err != nil {
			return
		}
	}
}

var (
	newline  = []byte("\n")
	blockCut = []byte("\n\ngoroutine ")
)

// cut returns where to end a chunk of buf, whose first old bytes were
// searched before: before the last goroutine header that follows a blank
// line, else, once buf holds maxCarry bytes, after its last line; 0 to
// read on, -1 when buf holds no whole line.
func (p *parallel) cut(buf []byte, old int) int {
	from := max(0, old-len(blockCut)+1)
	if i := bytes.LastIndex(buf[from:], blockCut); i >= 0 {
		return from + i + 2
	}
	if len(buf) < p.o.maxCarry {
		return 0
	}
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		return i + 1
	}
	return -1
}

// fill reads from r onto *buf until it holds n bytes or reading fails.
func fill(r io.Reader, buf *[]byte, n int) error {
	b := *buf
	if cap(b) < n {
		// Room for carries of up to a quarter chunk more, so that a
		// buffer is not grown afresh chunk after chunk.
		b = append(make([]byte, 0, n+n/4), b...)
	}
	empty := 0
	for len(b) < n {
		k, err := r.Read(b[len(b):n])
		b = b[:len(b)+k]
		if err != nil {
			*buf = b
			return err
		}
		if k > 0 {
			empty = 0
		} else if empty++; empty >= 100 {
			*buf = b
			return io.ErrNoProgress
		}
	}
	*buf = b
	return nil
}
