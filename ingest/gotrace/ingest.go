package gotrace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"golang.org/x/exp/trace"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// ErrNotTrace is returned (wrapped) for input that is not a Go execution
// trace.
var ErrNotTrace = errors.New("not a Go execution trace")

// ErrUnsupported is returned (wrapped) for a trace format this package does
// not read (Go 1.21 and older, or newer than x/exp/trace knows).
var ErrUnsupported = errors.New("unsupported Go execution trace format")

// ErrCorrupt is returned (wrapped, with a [*CorruptError] saying where and
// what) for a trace whose framing is broken or one of whose complete
// generations does not decode. A trace that is only cut short is not
// corrupt: it keeps its complete generations.
var ErrCorrupt = errors.New("corrupt Go execution trace")

// ErrIncomplete is returned (wrapped) for a trace that ends before its
// first generation is complete, so that nothing can be kept.
var ErrIncomplete = errors.New("execution trace ends before its first generation is complete")

// Options tune how a trace is placed on the bundle's timeline.
type Options struct {
	// WallOffsetNS is wall-clock minus CLOCK_MONOTONIC in nanoseconds, as
	// measured by capture (its clock_sync table). It is used only when the
	// trace has no clock snapshot of its own (Go 1.24 and older).
	WallOffsetNS int64
	// Now is the fallback anchor when the trace has neither a snapshot nor
	// an offset: the trace's end is placed at Now (for example the file's
	// modification time), and the manifest says so. Zero means the time of
	// the call.
	Now time.Time
	// NowIsStart places the trace's first event, not its end, at Now: Now
	// is when the trace was requested (a capture's raw file name, a time
	// the user gave), not when it was written.
	NowIsStart bool

	// Workers is how many generations are decoded at once, each on two
	// goroutines (0: one per two CPUs, at least one, at most maxWorkers).
	// Memory grows with it: each holds a generation of parser state.
	Workers int
	// Mem allocates the Arrow buffers ingest builds (nil: the default
	// allocator).
	Mem memory.Allocator

	ignoreSnapshots bool  // tests: act as if the trace had no snapshot
	anchorEnd       int64 // trace time of the end, from prescanEnd
}

// Source settings and counters written to the manifest's trace source.
const (
	SettingFormat   = "format"
	SettingClock    = "clock"
	SettingWindows  = "windows"
	SettingOffsetNS = "clock_offset_ns"
)

// maxWorkers bounds the generations decoded at once: each holds one
// generation of parser state, so memory grows with it.
const maxWorkers = 4

// defaultWorkers is the number of generations decoded at once: each
// worker keeps two cores busy (parser and reduction, see parse.go).
func defaultWorkers() int { return max(1, min(runtime.GOMAXPROCS(0)/2, maxWorkers)) }

// Ingest reads one Go execution trace (one window) from r and adds its
// rows to the bundle: trace_goroutines, spans, metrics, clock_sync and
// trace_generations (where each generation is in the raw trace, so that
// [TransitionsFrom] can decode goroutines' state changes later), with stacks
// interned in the bundle's dictionaries.
//
// It fills a.Kind, a.Rows, a.Status and a.Detail and records the trace
// source (format, clock method, windows, counters) and the time range in
// the manifest. a.Name must be the raw trace's name in the bundle
// (raw/NAME), which trace_generations refers to. Input that does not
// start with a trace header is refused with an error wrapping
// [ErrNotTrace]; a corrupt trace with [ErrCorrupt]; a trace cut short
// before its first generation ends with [ErrIncomplete]. A trace cut
// short later keeps every complete generation: Ingest returns nil with
// a.Status = [bundle.StatusTruncated] and a.Detail saying where and why
// it stopped, which callers should print as a warning.
//
// Ingest does not copy the input under raw/ (callers do, with
// [bundle.Writer.CopyRaw]) and does not close r. Generations are decoded
// in parallel (Options.Workers); when r is an io.ReaderAt and io.Seeker
// (a file) they are read where they lie, otherwise the few in flight are
// buffered. Memory follows the trace's live state (goroutines alive, open
// spans) and the size of its generations, not the trace's size.
func Ingest(w *bundle.Writer, r io.Reader, a *bundle.Artifact, opts Options) error {
	mem := opts.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	a.Kind = bundle.SourceTrace
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	f, v, err := openFramer(r, &opts)
	if err != nil {
		return err
	}
	var window int64
	w.Update(func(m *bundle.Manifest) {
		src := m.Source(bundle.SourceTrace)
		if src.Settings == nil {
			src.Settings = map[string]string{}
		}
		window, _ = strconv.ParseInt(src.Settings[SettingWindows], 10, 64)
		src.Settings[SettingWindows] = strconv.FormatInt(window+1, 10)
	})
	h := newHandler(w, mem, a.Name, opts, window)
	workers := opts.Workers
	if workers <= 0 {
		workers = defaultWorkers()
	}
	stop := pump(f, h, workers)
	if h.syncs > 0 {
		// The Sync that ends the trace.
		h.handle(&rec{kind: recSync, ts: h.last})
	}
	h.finish()
	if h.err != nil {
		return fmt.Errorf("write trace rows: %w", h.err)
	}
	if stop != nil && !isCut(stop) {
		if errors.Is(stop, ErrCorrupt) {
			return fmt.Errorf("%w: %w", ErrCorrupt, stop)
		}
		return fmt.Errorf("read trace: %w", stop)
	}
	if h.syncs == 0 {
		if stop == nil {
			stop = &cutError{f.pos, "the input ends right after the header"}
		}
		return fmt.Errorf("%w: %v; nothing could be kept (the trace was cut short, or is not a whole trace)", ErrIncomplete, stop)
	}
	return h.record(w, a, v, stop, f.pos)
}

// openFramer reads and checks the trace header of r and returns the
// batch framer over the rest, with the trace format version. Without
// clock snapshots (before Go 1.25) or an offset, the end of the trace is
// anchored at opts.Now: it finds that end from the batch headers when
// the input can be read at random (opts.anchorEnd).
func openFramer(r io.Reader, opts *Options) (*framer, int, error) {
	var pos0 int64 = -1
	seeker, seekable := r.(io.Seeker)
	readerAt, hasReadAt := r.(io.ReaderAt)
	if seekable {
		if p, err := seeker.Seek(0, io.SeekCurrent); err == nil {
			pos0 = p
		}
	}
	head := make([]byte, headerLen)
	n, err := io.ReadFull(r, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, 0, fmt.Errorf("read trace header: %w", err)
	}
	head = head[:n]
	v, ok := parseHeader(head)
	if !ok || n < headerLen {
		return nil, 0, notTraceError(head)
	}
	if v < 22 {
		return nil, 0, fmt.Errorf("%w: Go 1.%d trace format (leakscope reads Go 1.22 and newer traces)", ErrUnsupported, v)
	}
	if _, err := trace.NewReader(bytes.NewReader(head)); err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	f := &framer{version: v, pos: headerLen, head: head}
	if hasReadAt && pos0 >= 0 {
		f.ra = io.NewSectionReader(readerAt, pos0, 1<<62)
	} else {
		f.br = bufio.NewReaderSize(r, 64<<10)
	}
	noClock := opts.WallOffsetNS == 0 && (v < 25 || opts.ignoreSnapshots)
	if noClock && f.ra != nil && !opts.NowIsStart {
		if end, err := prescanEnd(io.NewSectionReader(readerAt, pos0, 1<<62)); err == nil {
			opts.anchorEnd = end
		}
	}
	return f, v, nil
}

// pump cuts the input into generations on one goroutine, decodes up to
// workers of them at once on others, and merges their parts in order on
// this one, which the handler owns. With one worker there is nothing to
// merge: this goroutine decodes the generations in order and applies
// their steps as it goes (directOut), which saves encoding them. It
// returns why the input ended: nil at a clean end, a *cutError, a
// *CorruptError or a read error.
func pump(f *framer, h *handler, workers int) error {
	f.pool = make(chan []byte, workers+3)
	var work chan *chunk
	if workers > 1 {
		work = make(chan *chunk)
	}
	order := make(chan *chunk, workers)
	quit := make(chan struct{})
	var frameErr error
	parts := partsPerWorker(workers)
	go func() {
		defer close(order)
		if work != nil {
			defer close(work)
		}
		frameErr = frame(f, work, order, quit, parts)
	}()
	if work == nil {
		return pumpDirect(f, h, order, quit, func() error { return frameErr })
	}
	startWorkers(f, work, workers, parts)
	var err error
	for c := range order {
		if err == nil {
			h.startGen()
		}
		for p := range c.parts {
			if err == nil {
				h.mergePart(p)
			}
			p.reset()
			p.pool <- p
		}
		if err == nil {
			if err = h.finishGen(c); err != nil {
				close(quit)
			}
		}
	}
	if err != nil {
		return err
	}
	return frameErr
}

// pumpDirect decodes the generations of order on one parser and applies
// their steps to h on this goroutine as they come. frameErr gives why
// the input ended, once order is closed.
func pumpDirect(f *framer, h *handler, order <-chan *chunk, quit chan struct{}, frameErr func() error) error {
	p := startParser(f, order, quit, true)
	d := newDecoder(nil, directOut{h})
	var err error
	for b := range p.out {
		if err != nil {
			continue // draining after a failure
		}
		if d.c != b.c {
			h.startGen()
		}
		d.take(p, b)
		if !b.end {
			continue
		}
		f.recycle(b.c)
		if err = h.finishGen(b.c); err != nil {
			close(quit)
		}
	}
	if err != nil {
		return err
	}
	return frameErr()
}

// finishGen ends the merge of generation c, or says why c does not
// decode.
func (h *handler) finishGen(c *chunk) error {
	if c.sum.err != nil {
		return &CorruptError{c.off, fmt.Sprintf("generation %d (bytes %d to %d) does not decode: %v", c.gen, c.off, c.end, c.sum.err)}
	}
	if h.endGen(c); h.err != nil {
		return h.err
	}
	return nil
}

// startWorkers starts workers parsers and reducers that decode the
// generations of work into parts, each with parts of its own. They parse
// every generation they take: the merge drains the parts of every
// generation the framer handed out, even after a failure.
func startWorkers(f *framer, work <-chan *chunk, workers, parts int) {
	for range workers {
		pool := make(chan *part, parts)
		for range parts {
			pool <- &part{pool: pool}
		}
		d := newDecoder(pool, nil)
		go d.run(startParser(f, work, nil, false), f.recycle)
	}
}

// frame hands each complete generation to a worker (none when work is
// nil) and, in order, to the merge, and returns why the input ended. An incomplete last generation
// (cut at a batch boundary) is dropped.
func frame(f *framer, work, order chan<- *chunk, quit <-chan struct{}, parts int) error {
	for {
		c, err := f.next()
		if c == nil {
			return err
		}
		if !c.complete(f.version) {
			why := fmt.Sprintf("the input ends at byte %d inside generation %d", c.end, c.gen)
			if f.version >= 26 {
				f.recycle(c)
				return &cutError{c.end, why + ", before its end-of-generation marker"}
			}
			// A Go 1.22–1.25 generation ends at the end of the input for
			// Go's reader: one that decodes alone is whole (a tiny trace
			// with no table), one that does not was cut at a batch
			// boundary.
			if !decodesAlone(f.open(c)) {
				f.recycle(c)
				return &cutError{c.end, why + ", whose last batch is not a string or stack table (a generation's last)"}
			}
		}
		if work != nil {
			c.parts = make(chan *part, parts+1)
			select {
			case work <- c:
			case <-quit:
				return nil
			}
		}
		select {
		case order <- c:
		case <-quit:
			return nil
		}
	}
}

// decodesAlone reports whether x/exp/trace reads r, one generation as a
// standalone trace, to its end without an error.
func decodesAlone(r io.Reader) bool {
	tr, err := trace.NewReader(r)
	if err != nil {
		return false
	}
	for {
		if _, err := tr.ReadEvent(); err != nil {
			return err == io.EOF
		}
	}
}

// open returns c as a standalone trace.
func (f *framer) open(c *chunk) io.Reader {
	if c.data != nil {
		return bytes.NewReader(c.data)
	}
	return io.MultiReader(bytes.NewReader(f.head), io.NewSectionReader(f.ra, c.off, c.end-c.off))
}
