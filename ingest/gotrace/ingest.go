package gotrace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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

	// SchedulingTransitions also writes the runnable → running rows (the
	// scheduler starting a goroutine). They are a third of all state
	// changes in a busy program, carry no reason or stack, and the leak
	// analyses do not use them, so by default they are left out (the
	// goroutine's state is still followed).
	SchedulingTransitions bool
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

// batchRecs is the number of events handed from the reader goroutine to
// the writer goroutine at once.
const batchRecs = 1024

// pumpBatches is how many batches may wait between the reader goroutine
// and the handler.
const pumpBatches = 64

// Ingest reads one Go execution trace (one window) from r and adds its
// rows to the bundle: trace_goroutines, trace_transitions, spans, metrics
// and clock_sync, with stacks interned in the bundle's dictionaries.
//
// It fills a.Kind, a.Rows, a.Status and a.Detail and records the trace
// source (format, clock method, windows, counters) and the time range in
// the manifest. Input that does not start with a trace header is refused
// with an error wrapping [ErrNotTrace]. A trace that ends early or is
// corrupt keeps every complete generation: Ingest returns nil with
// a.Status = [bundle.StatusTruncated] and a.Detail saying where and why it
// stopped, which callers should print as a warning.
//
// Ingest does not copy the input under raw/ (callers do, with
// [bundle.Writer.CopyRaw]) and does not close r. Reading, row building and
// writing run on three goroutines; Ingest returns when all are done.
// Memory follows the trace's live state (goroutines alive, open spans, one
// generation of x/exp/trace state) plus fixed-size batches, not the
// trace's size.
func Ingest(w *bundle.Writer, r io.Reader, a *bundle.Artifact, opts Options) error {
	mem := opts.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	a.Kind = bundle.SourceTrace
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
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
		return fmt.Errorf("read trace header: %w", err)
	}
	head = head[:n]
	v, ok := parseHeader(head)
	if !ok || n < headerLen {
		return notTraceError(head)
	}
	if v < 22 {
		return fmt.Errorf("%w: Go 1.%d trace format (leakscope reads Go 1.22 and newer traces)", ErrUnsupported, v)
	}
	// Without clock snapshots (before Go 1.25) or an offset, the end of the
	// trace is anchored at opts.Now: find it from the batch headers when
	// the input can be read at random.
	noClock := opts.WallOffsetNS == 0 && (v < 25 || opts.ignoreSnapshots)
	if noClock && hasReadAt && pos0 >= 0 && !opts.NowIsStart {
		if end, err := prescanEnd(io.NewSectionReader(readerAt, pos0, 1<<62)); err == nil {
			opts.anchorEnd = end
		}
	}
	cr := &countingReader{r: io.MultiReader(bytes.NewReader(head), r)}
	tr, err := trace.NewReader(cr)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnsupported, err)
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
	source := a.Name
	if source == "" {
		source = bundle.SourceTrace
	}
	h := newHandler(w, mem, source, opts, window)
	readErr := pump(tr, h)
	h.finish()
	if h.err != nil {
		return fmt.Errorf("write trace rows: %w", h.err)
	}
	return h.record(w, a, v, readErr, cr.n)
}

// batch is a run of events handed from the reader goroutine to the
// handler. Items are small (most are state transitions, kept undecoded);
// the few events decoded on the reader side live in decoded.
type batch struct {
	items   []item
	decoded []rec
}

// item is one kept event: an undecoded state transition (kind recEvent,
// see decodeOnReader) or the index of its record in batch.decoded.
type item struct {
	ev   trace.Event
	kind recKind
	i    int32
}

func newBatch() *batch { return &batch{items: make([]item, 0, batchRecs)} }

func (b *batch) reset() {
	b.items = b.items[:0]
	b.decoded = b.decoded[:0]
}

// pump reads events on a separate goroutine and hands them to h on this
// one, which decodes the state transitions (see [rec]). It returns the
// reader's error (nil at a clean end). The queue between the two holds
// up to pumpBatches batches (a few MB), so that neither side stalls when
// the other is briefly descheduled.
func pump(tr *trace.Reader, h *handler) error {
	full := make(chan *batch, pumpBatches)
	free := make(chan *batch, pumpBatches+2)
	stop := make(chan struct{})
	var readErr error
	go func() {
		defer close(full)
		readErr = produce(tr, full, free, stop)
	}()
	var decodeErr error
	for b := range full {
		decodeErr = handleBatch(h, b)
		if h.err != nil || decodeErr != nil {
			close(stop)
			for range full {
			}
			break
		}
		b.reset()
		select {
		case free <- b:
		default:
		}
	}
	if decodeErr != nil {
		return decodeErr
	}
	return readErr
}

// handleBatch decodes the state transitions of b and hands every record
// to h. Decoding runs the parser's accessors, so a panic in them is
// returned as an error, as produce does for the reader.
func handleBatch(h *handler, b *batch) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("trace parser failed: %v", p)
		}
	}()
	for i := range b.items {
		it := &b.items[i]
		if it.kind == recEvent {
			if decodeTransition(&it.ev, &h.tmp) {
				h.handle(&h.tmp)
			}
			continue
		}
		h.handle(&b.decoded[it.i])
	}
	return nil
}

// produce reads and decodes events into batches until the trace ends, the
// reader fails (its error is returned; io.EOF is not an error) or stop is
// closed. A panic in the parser is returned as an error.
func produce(tr *trace.Reader, full chan<- *batch, free <-chan *batch, stop <-chan struct{}) (err error) {
	b := newBatch()
	send := func() bool {
		select {
		case full <- b:
		case <-stop:
			return false
		}
		select {
		case b = <-free:
		default:
			b = newBatch()
		}
		return true
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("trace parser failed: %v", p)
		}
		if len(b.items) > 0 {
			send()
		}
	}()
	for {
		// Read straight into the batch: an event is 80 bytes, and most
		// are kept as they are.
		n := len(b.items)
		b.items = b.items[:n+1]
		it := &b.items[n]
		var err error
		it.ev, err = tr.ReadEvent()
		if err != nil {
			b.items = b.items[:n]
			if err == io.EOF {
				return nil
			}
			return err
		}
		if !decodeOnReader(it, b) {
			b.items = b.items[:n]
			continue
		}
		if len(b.items) == cap(b.items) && !send() {
			b.reset()
			return nil
		}
	}
}

// countingReader counts the bytes the trace reader consumed.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
