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

// batchRecs is the number of records handed from the reader goroutine to
// the writer goroutine at once.
const batchRecs = 1024

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
	if noClock && hasReadAt && pos0 >= 0 {
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

// pump reads events on a separate goroutine and hands them, decoded, to h
// on this one. It returns the reader's error (nil at a clean end).
func pump(tr *trace.Reader, h *handler) error {
	full := make(chan []rec, 4)
	free := make(chan []rec, 6)
	stop := make(chan struct{})
	var readErr error
	go func() {
		defer close(full)
		readErr = produce(tr, full, free, stop)
	}()
	for batch := range full {
		for i := range batch {
			h.handle(&batch[i])
		}
		if h.err != nil {
			close(stop)
			for range full {
			}
			break
		}
		select {
		case free <- batch[:0]:
		default:
		}
	}
	return readErr
}

// produce reads and decodes events into batches until the trace ends, the
// reader fails (its error is returned; io.EOF is not an error) or stop is
// closed. A panic in the parser is returned as an error.
func produce(tr *trace.Reader, full chan<- []rec, free <-chan []rec, stop <-chan struct{}) (err error) {
	buf := make([]rec, 0, batchRecs)
	send := func() bool {
		select {
		case full <- buf:
		case <-stop:
			return false
		}
		select {
		case buf = <-free:
		default:
			buf = make([]rec, 0, batchRecs)
		}
		return true
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("trace parser failed: %v", p)
		}
		if len(buf) > 0 {
			send()
		}
	}()
	for {
		ev, err := tr.ReadEvent()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		buf = buf[:len(buf)+1]
		if !decode(&ev, &buf[len(buf)-1]) {
			buf = buf[:len(buf)-1]
			continue
		}
		if len(buf) == cap(buf) && !send() {
			buf = buf[:0]
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
