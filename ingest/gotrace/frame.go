package gotrace

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A Go 1.22+ trace is its header followed by batches. Each batch belongs
// to one generation (about a second of the program) and a generation's
// batches are contiguous; a generation carries its own string and stack
// tables and the status of every goroutine alive in it, so it can be read
// on its own, as if the trace began there. The framer reads only batch
// headers, cuts the input into generations and checks the framing; the
// generations are then decoded with x/exp/trace in parallel (see pump) and
// later one at a time again (see Transitions).

// Wire-format facts (internal/trace/tracev2 of x/exp/trace).
const (
	evEventBatch        = 1
	evStacks            = 2
	evStrings           = 4
	evFrequency         = 8
	evExperimentalBatch = 49
	evSync              = 50
	evEndOfGeneration   = 52
	// maxBatchSize is the largest batch body the runtime writes.
	maxBatchSize = 64 << 10
	// maxBatchHeader bounds a batch header: type, experiment and four
	// varints.
	maxBatchHeader = 2 + 4*binary.MaxVarintLen64
)

// chunk is one generation of the input.
type chunk struct {
	seq int    // 0-based position among the input's generations
	gen uint64 // the trace's generation number
	// off and end delimit the generation's batches in the input (byte 0
	// is the first byte of the header).
	off, end int64
	// data holds header and batches when the input is not seekable; nil
	// means read [off, end) from the input.
	data []byte
	// ended says the generation is known to be complete: an
	// end-of-generation marker or the next generation's first batch
	// followed it.
	ended bool
	// tables says the last batch is a string or stack table, which the
	// runtime writes last in a generation (how a complete last generation
	// of a Go 1.22–1.25 trace is told from one cut at a batch boundary).
	tables bool
	// parts carries the decoded generation to the merge; sum is set
	// before it is closed.
	parts chan *part
	sum   genSummary
}

// complete reports whether the chunk is a whole generation.
func (c *chunk) complete(version int) bool {
	return c.ended || (version < 26 && c.tables)
}

// CorruptError describes input that is not a well-formed trace: the
// framing is broken, or a complete generation does not decode.
type CorruptError struct {
	Offset int64 // byte of the input where the problem is
	Msg    string
}

func (e *CorruptError) Error() string { return fmt.Sprintf("byte %d: %s", e.Offset, e.Msg) }

// Unwrap makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// cutError says where and how the input ends before a generation does.
type cutError struct {
	offset int64
	msg    string
}

func (e *cutError) Error() string { return e.msg }

// framer splits a trace into generations.
type framer struct {
	version int
	pos     int64 // bytes of the input consumed
	// Exactly one of these is set: ra for seekable input (bodies are
	// skipped, workers read them), br for a stream (bodies are copied).
	ra   io.ReaderAt
	br   *bufio.Reader
	head []byte // the trace header, copied into each streamed chunk
	pool chan []byte
	hdr  [maxBatchHeader]byte

	seq     int
	lastGen uint64
	spill   *batchHeader // first batch of the next generation (Go < 1.26)
	done    bool
}

// batchHeader is a batch's framing.
type batchHeader struct {
	off    int64 // of the batch's first byte
	typ    byte
	gen    uint64
	size   int64 // of the body
	hdrLen int64
	first  byte // first byte of the body (its first event's type), 0 if empty
}

// next returns the next generation, nil at the end of the input. A nil
// chunk comes with nil at a clean end, a *cutError when the input ends
// inside a generation, or a *CorruptError.
func (f *framer) next() (*chunk, error) {
	if f.done {
		return nil, nil
	}
	c := &chunk{seq: f.seq, off: f.pos, end: f.pos}
	if f.br != nil {
		c.data = append(f.buffer(), f.head...)
	}
	add := func(h *batchHeader) error {
		if err := f.body(c, h); err != nil {
			return err
		}
		c.end = f.pos
		c.tables = h.first == evStrings || h.first == evStacks
		return nil
	}
	if h := f.spill; h != nil {
		f.spill = nil
		c.gen = h.gen
		if err := add(h); err != nil {
			return f.stop(c, err)
		}
	}
	for {
		h, err := f.header()
		if err == io.EOF {
			f.done = true
			if c.end == c.off {
				f.recycle(c)
				return nil, nil
			}
			return c, nil
		}
		if err != nil {
			return f.stop(c, err)
		}
		if h.typ == evEndOfGeneration {
			if f.version < 26 {
				return f.stop(c, &CorruptError{h.off, "end-of-generation marker in a Go 1." + fmt.Sprint(f.version) + " trace (it has none before Go 1.26)"})
			}
			if c.end == c.off {
				return f.stop(c, &CorruptError{h.off, "end-of-generation marker without a generation before it"})
			}
			if err := add(h); err != nil {
				return f.stop(c, err)
			}
			c.ended = true
			return f.emit(c), nil
		}
		if c.end == c.off {
			if f.seq > 0 && h.gen != f.lastGen+1 {
				return f.stop(c, &CorruptError{h.off, fmt.Sprintf("batch of generation %d follows generation %d", h.gen, f.lastGen)})
			}
			c.gen = h.gen
		} else if h.gen != c.gen {
			if f.version < 26 && h.gen == c.gen+1 {
				f.spill = h
				c.ended = true
				return f.emit(c), nil
			}
			msg := fmt.Sprintf("batch of generation %d inside generation %d", h.gen, c.gen)
			if f.version >= 26 {
				msg += " (no end-of-generation marker)"
			}
			return f.stop(c, &CorruptError{h.off, msg})
		}
		if err := add(h); err != nil {
			return f.stop(c, err)
		}
	}
}

// emit numbers a finished chunk.
func (f *framer) emit(c *chunk) *chunk {
	f.seq++
	f.lastGen = c.gen
	return c
}

// stop ends framing with err, dropping the unfinished chunk c.
func (f *framer) stop(c *chunk, err error) (*chunk, error) {
	f.done = true
	f.recycle(c)
	return nil, err
}

// header reads the next batch header (io.EOF at a clean end).
func (f *framer) header() (*batchHeader, error) {
	h := &batchHeader{off: f.pos}
	buf, n, err := f.peek()
	if n == 0 {
		if err == nil || err == io.EOF {
			return nil, io.EOF
		}
		return nil, err
	}
	h.typ = buf[0]
	switch h.typ {
	case evEndOfGeneration:
		h.hdrLen = 1
		return h, nil
	case evEventBatch, evExperimentalBatch:
	default:
		return nil, &CorruptError{h.off, fmt.Sprintf("expected a batch (event type %d or %d), found byte 0x%02x", evEventBatch, evExperimentalBatch, h.typ)}
	}
	p := 1
	if h.typ == evExperimentalBatch {
		p++
	}
	var vals [4]uint64 // generation, M, timestamp, size
	for i := range vals {
		if p >= n {
			return nil, f.cutHeader(h, err)
		}
		v, k := binary.Uvarint(buf[p:n])
		if k == 0 {
			return nil, f.cutHeader(h, err)
		}
		if k < 0 {
			return nil, &CorruptError{h.off, "malformed varint in a batch header"}
		}
		vals[i] = v
		p += k
	}
	h.gen, h.hdrLen = vals[0], int64(p)
	if h.gen == 0 {
		return nil, &CorruptError{h.off, "batch of generation 0 (generations count from 1)"}
	}
	if vals[3] > maxBatchSize {
		return nil, &CorruptError{h.off, fmt.Sprintf("batch of %d bytes (the runtime writes at most %d)", vals[3], maxBatchSize)}
	}
	h.size = int64(vals[3])
	if h.size > 0 && p < n {
		h.first = buf[p]
	}
	return h, nil
}

// peek returns up to maxBatchHeader bytes at f.pos without consuming them.
func (f *framer) peek() ([]byte, int, error) {
	if f.ra != nil {
		n, err := f.ra.ReadAt(f.hdr[:], f.pos)
		return f.hdr[:], n, err
	}
	buf, err := f.br.Peek(maxBatchHeader)
	return buf, len(buf), err
}

func (f *framer) cutHeader(h *batchHeader, err error) error {
	if err != nil && err != io.EOF {
		return err
	}
	return &cutError{h.off, fmt.Sprintf("the batch header at byte %d is cut short", h.off)}
}

// body consumes batch h and, for a stream, copies it into c.
func (f *framer) body(c *chunk, h *batchHeader) error {
	n := h.hdrLen + h.size
	if f.ra != nil {
		// Check that the body is there: the last byte must be readable.
		if _, err := f.ra.ReadAt(f.hdr[:1], h.off+n-1); err != nil {
			if err == io.EOF {
				return &cutError{h.off, fmt.Sprintf("the batch at byte %d (%d bytes) is cut short", h.off, h.size)}
			}
			return err
		}
		f.pos += n
		return nil
	}
	start := len(c.data)
	c.data = append(c.data, make([]byte, n)...)
	m, err := io.ReadFull(f.br, c.data[start:])
	f.pos += int64(m)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return &cutError{h.off, fmt.Sprintf("the batch at byte %d (%d bytes) is cut short", h.off, h.size)}
	}
	return err
}

// buffer returns a recycled chunk buffer, or nil.
func (f *framer) buffer() []byte {
	select {
	case b := <-f.pool:
		return b[:0]
	default:
		return nil
	}
}

// recycle returns c's buffer for reuse.
func (f *framer) recycle(c *chunk) {
	if c.data == nil {
		return
	}
	select {
	case f.pool <- c.data:
	default:
	}
	c.data = nil
}

// isCut reports whether err says the input ends inside a generation.
func isCut(err error) bool {
	var c *cutError
	return errors.As(err, &c)
}
