package ingest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/dump"
	"github.com/leakscope/leakscope/ingest/gotrace"
	"github.com/leakscope/leakscope/ingest/profiles"
	"github.com/leakscope/leakscope/ingest/srclines"
)

// ErrUnknownKind is returned (wrapped) for a file that is none of the
// kinds leakscope reads.
var ErrUnknownKind = errors.New("not a pprof profile, goroutine dump or Go execution trace")

// Options tune [File].
type Options struct {
	// Progress, if set, is called as the file is read with the bytes read
	// so far and the file size.
	Progress func(read, size int64)
	// Mem allocates Arrow buffers; nil means memory.DefaultAllocator.
	Mem memory.Allocator
	// Manifest is used when the bundle does not exist yet.
	Manifest bundle.Manifest
	// MaxDecompressed caps what a gzip- or zstd-compressed file may
	// expand to (0: DefaultMaxDecompressed); past it the file is refused
	// with an error wrapping ErrTooLarge.
	MaxDecompressed int64
	// At, when set, is when the file was taken (for a trace, when it
	// started); it overrides every time the file itself or its name
	// carries.
	At time.Time
	// SourceRoots are checkouts or module caches where the source of the
	// frames' functions is looked for when their recorded paths cannot be
	// read (see [srclines.Candidates]); the module cache
	// ([srclines.DefaultModCache]) is always tried for module@version
	// paths.
	SourceRoots []string
	// OnSource, if set, is called with what the source snapshot of the
	// file's frames kept and missed.
	OnSource func(srclines.Stats)
}

// File adds the file at path to the bundle in dir, creating the bundle if
// needed. The file's kind is detected from its content. The whole file is
// one unit, added in one transaction (see [bundle.Begin]): on error, or if
// the process is killed, the bundle is left exactly as it was (a bundle
// File created is removed), and the error names the file and what is wrong
// with it. A file whose content the bundle already holds is refused with
// [ErrDuplicate], so re-running an interrupted ingest adds nothing twice. The returned artifact says
// what was made of it; its Status is "truncated" (with Detail) when the
// file was cut short but its complete part was kept.
func File(dir, path string, opts Options) (bundle.Artifact, error) {
	a := bundle.Artifact{OriginPath: path}
	f, err := os.Open(path)
	if err != nil {
		return a, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return a, err
	}
	if st.IsDir() {
		return a, fmt.Errorf("%s: is a directory, not a profile, dump or trace", path)
	}
	a.Size = st.Size()
	a.Time, a.TimeBasis, a.TimeDetail = fileTime(path, st, opts.At)
	a, err = Reader(dir, filepath.Base(path), f, a, opts)
	if err != nil {
		return a, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// Reader is [File] for content that is not in a file: name is the name
// the original gets under raw/, and a carries the size (for progress) and
// the time to use where the content has none (with its basis; none means
// [bundle.TimeGiven]). A dump or profile whose time another snapshot of
// its kind in the bundle already has is placed 1 ns after it, with
// a.TimeBasis [bundle.TimeOrder]: distinct files never merge into one
// snapshot.
func Reader(dir, name string, r io.Reader, a bundle.Artifact, opts Options) (bundle.Artifact, error) {
	mem := opts.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	whole := randomAccess(r)
	if opts.Progress != nil {
		r = &progressReader{r: r, size: a.Size, fn: opts.Progress}
	}
	src, err := openContent(r, opts.MaxDecompressed)
	if err != nil {
		return a, err
	}
	if src.kind == KindUnknown {
		src.close()
		return a, src.unknown()
	}
	ad := &addition{src: src, mem: mem, opts: opts}
	if src.compression == "" && src.kind == KindTrace && whole != nil {
		// A plain trace in a file is read where it lies, generations
		// at a time, and copied under raw/ after: streamed, the parser
		// would hold the generations in flight in memory.
		ad.whole, ad.wholeIn = whole, whole
		if opts.Progress != nil {
			ad.wholeIn = io.NewSectionReader(&progressReaderAt{r: whole, size: a.Size, fn: opts.Progress}, 0, whole.Size())
		}
	}
	if err := ad.begin(dir, name, opts.Manifest, &a); err != nil {
		return a, err
	}
	if a.TimeBasis == "" {
		a.TimeBasis = bundle.TimeGiven
	}
	if err := ad.settle(&a, ad.parse(&a)); err != nil {
		os.Remove(ad.raw.Name())
		ad.w.Abort()
		return a, err
	}
	return a, ad.commit(a)
}

// addition is one file being added to a bundle: its content, the
// transaction that adds it, and the copy of the original under raw/.
type addition struct {
	src  *content
	mem  memory.Allocator
	opts Options
	w    *bundle.Writer
	raw  *os.File
	tee  io.Reader // the content, copied into raw as it is read
	// whole, when set, is the input read at random from its start
	// (a plain trace in a file): the parser reads it, and settle copies
	// it into raw as it parses; tee is then unused. wholeIn is what the
	// parser reads of it (reporting progress); kept waits for the copy.
	whole, wholeIn *io.SectionReader
	kept           func() error
}

// randomAccess returns r from its present offset to its present end as
// a reader at random (what a file grows by meanwhile is not read), nil
// when r cannot be read so (a stream).
func randomAccess(r io.Reader) *io.SectionReader {
	ra, ok := r.(io.ReaderAt)
	sk, ok2 := r.(io.Seeker)
	if !ok || !ok2 {
		return nil
	}
	at, err := sk.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil
	}
	end, err := sk.Seek(0, io.SeekEnd)
	if _, err2 := sk.Seek(at, io.SeekStart); err != nil || err2 != nil || end < at {
		return nil
	}
	return io.NewSectionReader(ra, at, end-at)
}

// begin opens the transaction on dir (a new bundle gets manifest m, or a
// fresh one when m is zero) and the raw copy named name, and sets a.Name to
// the copy's bundle-relative name. On error it undoes what it started, the
// content included.
func (ad *addition) begin(dir, name string, m bundle.Manifest, a *bundle.Artifact) error {
	if m.FormatVersion == 0 {
		m = bundle.NewManifest(newID(), "leakscope")
	}
	w, err := bundle.Begin(dir, m, ad.mem)
	if err != nil {
		ad.src.close()
		return err
	}
	raw, rel, err := w.CreateRaw(name)
	if err != nil {
		ad.src.close()
		w.Abort()
		return err
	}
	a.Name = rel
	if ad.whole != nil {
		ad.w, ad.raw, ad.kept = w, raw, ad.src.keepWhole(ad.whole, raw)
		return nil
	}
	tee, err := ad.src.attach(raw)
	if err != nil {
		ad.src.close()
		raw.Close()
		os.Remove(raw.Name())
		w.Abort()
		return err
	}
	ad.w, ad.raw, ad.tee = w, raw, tee
	return nil
}

// parse reads the content into the bundle's tables with the parser for its
// kind, placing a's time where the kind needs it distinct or the content
// carries its own.
func (ad *addition) parse(a *bundle.Artifact) error {
	w, tee := ad.w, ad.tee
	have := w.Manifest().Artifacts
	var err error
	switch ad.src.kind {
	case KindPprof:
		err = profiles.IngestWith(w, tee, a, profiles.Options{Taken: func(p string, t time.Time) bool {
			return timeTaken(have, bundle.SourcePprof, p, t) != ""
		}})
	case KindDump:
		distinctTime(a, have, bundle.SourceDump, "")
		err = dump.Ingest(w, tee, a)
	case KindLog:
		distinctTime(a, have, bundle.SourceDump, "")
		err = logError(dump.Ingest(w, tee, a))
	case KindTrace:
		var r io.Reader = tee
		if ad.whole != nil {
			r = ad.wholeIn
		}
		err = gotrace.Ingest(w, r, a, gotrace.Options{Now: a.Time, NowIsStart: traceTimeIsStart(a.TimeBasis)})
		if err == nil && traceClock(w) == gotrace.ClockSnapshot {
			a.TimeBasis, a.TimeDetail = bundle.TimeContent, "the trace's own clock snapshots"
			if !a.Start.IsZero() {
				// Dated by its own clock: its time is its first event's,
				// not the file's name or mtime it was guessed from.
				a.Time = a.Start
			}
		}
	}
	return err
}

// settle finishes the raw copy after parse returned err, snapshots the
// source lines, marks a truncated when the content was cut short, and
// refuses content the bundle already holds. It returns the first error.
func (ad *addition) settle(a *bundle.Artifact, err error) error {
	src := ad.src
	finish := src.finish
	if ad.kept != nil {
		finish = ad.kept
	}
	if ferr := finish(); err == nil {
		// The whole original is kept, even where the parser stopped early.
		err = ferr
	}
	if err == nil {
		// Quote the code as it is now, not as it is when a report is
		// written later.
		var st srclines.Stats
		st, err = srclines.Snapshot(ad.w, ad.mem, srclines.Options{Source: "ingest", SourceRoots: ad.opts.SourceRoots, ModCache: srclines.DefaultModCache()})
		if err == nil && ad.opts.OnSource != nil {
			ad.opts.OnSource(st)
		}
	}
	if cerr := ad.raw.Close(); err == nil {
		err = cerr
	}
	if cut := src.cutShort(); cut != "" {
		switch {
		case src.kind == KindPprof:
			err = fmt.Errorf("corrupt or truncated %s stream: it ends early, and a profile must be whole", src.compression)
		case err == nil:
			a.Status = bundle.StatusTruncated
			a.Detail = joinDetail(cut, a.Detail)
		}
	}
	if err == nil {
		a.SHA256 = src.sum()
		err = duplicate(ad.w.Manifest(), *a)
	}
	return err
}

// commit records a in the manifest (with its source's truncation and the
// bundle's time span) and closes the transaction.
func (ad *addition) commit(a bundle.Artifact) error {
	ad.w.Update(func(m *bundle.Manifest) {
		m.Artifacts = append(m.Artifacts, a)
		src := m.Source(sourceOf(ad.src.kind))
		if a.Status == bundle.StatusTruncated {
			src.Status = bundle.StatusTruncated
			src.Detail = a.Name + ": " + a.Detail
		}
		m.Widen(a.Time)
	})
	return ad.w.Close()
}

func joinDetail(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}

// ErrDuplicate is wrapped by the error for a file whose content the bundle
// already holds: adding it again would count every row twice.
var ErrDuplicate = errors.New("already in the bundle")

// duplicate refuses a whose content an artifact of m already has.
func duplicate(m bundle.Manifest, a bundle.Artifact) error {
	for _, o := range m.Artifacts {
		if o.SHA256 != "" && o.SHA256 == a.SHA256 {
			return fmt.Errorf("%w as %s (same content); not added again", ErrDuplicate, o.Name)
		}
	}
	return nil
}

// logError says what a text file without a traceback is.
func logError(err error) error {
	var ne *dump.NoGoroutinesError
	if !errors.As(err, &ne) || ne.Cut != "" {
		return err
	}
	msg := fmt.Sprintf("it is text, and none of its %d lines starts a goroutine traceback or race report", ne.Lines)
	if ne.Notes != "" {
		msg += " (" + ne.Notes + ")"
	}
	return fmt.Errorf("%w: %s", ErrUnknownKind, msg)
}

// timeTaken returns the name of an artifact of the kind (and profile)
// whose time is t, or "".
func timeTaken(have []bundle.Artifact, kind, profile string, t time.Time) string {
	for _, o := range have {
		if o.Kind == kind && o.Profile == profile && o.Time.Equal(t) {
			return o.Name
		}
	}
	return ""
}

// distinctTime moves a past every artifact of its kind with the same time,
// 1 ns at a time, keeping the order files were given in.
func distinctTime(a *bundle.Artifact, have []bundle.Artifact, kind, profile string) {
	first := timeTaken(have, kind, profile, a.Time)
	if first == "" {
		return
	}
	at := a.Time
	for timeTaken(have, kind, profile, a.Time) != "" {
		a.Time = a.Time.Add(time.Nanosecond)
	}
	a.TimeDetail = fmt.Sprintf("%s has the same time %s (%s); placed after it in argument order", first, at.UTC().Format(time.RFC3339Nano), a.TimeBasis)
	a.TimeBasis = bundle.TimeOrder
}

// traceTimeIsStart reports whether a trace's time basis names its start
// (a capture's request, a file name, a time given) rather than its end
// (the modification time, written when the trace ended).
func traceTimeIsStart(basis string) bool {
	return basis != bundle.TimeMtime
}

// traceClock returns the clock method the last trace ingest recorded.
func traceClock(w *bundle.Writer) string {
	for _, s := range w.Manifest().Sources {
		if s.Kind == bundle.SourceTrace {
			return s.Settings[gotrace.SettingClock]
		}
	}
	return ""
}

func sourceOf(k Kind) string {
	switch k {
	case KindDump, KindLog:
		return bundle.SourceDump
	case KindTrace:
		return bundle.SourceTrace
	}
	return bundle.SourcePprof
}

func newID() string {
	return time.Now().UTC().Format("20060102T150405.000000000Z")
}

// progressReader reports bytes read.
type progressReader struct {
	r    io.Reader
	n    int64
	size int64
	fn   func(read, size int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	p.fn(p.n, p.size)
	return n, err
}

// progressReaderAt reports the furthest byte read at random.
type progressReaderAt struct {
	r    io.ReaderAt
	mu   sync.Mutex
	n    int64
	size int64
	fn   func(read, size int64)
}

func (p *progressReaderAt) ReadAt(b []byte, off int64) (int, error) {
	n, err := p.r.ReadAt(b, off)
	p.mu.Lock()
	if end := off + int64(n); end > p.n {
		p.n = end
		p.fn(p.n, p.size)
	}
	p.mu.Unlock()
	return n, err
}
