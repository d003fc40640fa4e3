package bundle

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/schema"
)

// RawDir is the folder inside a bundle that keeps the original artifacts.
const RawDir = "raw"

// FlushInterval is the longest time a row waits in memory before it is
// written to its table file.
const FlushInterval = time.Second

// Writer appends rows to a bundle. It is safe for concurrent use by
// multiple goroutines. Close must be called to finish the bundle.
//
// A writer of a new bundle ([Create] on a missing directory, as capture
// does) writes in place: every table is readable up to its last flush, so
// a capture killed with SIGKILL keeps everything up to its last second. A
// writer adding to an existing bundle, or started by [Begin], writes a
// transaction (see txn.go): nothing it writes is visible until Close
// commits it, and Abort or a kill leaves the bundle as it was.
type Writer struct {
	dir   string
	mem   memory.Allocator
	stage string   // the transaction's staging directory; "" when writing in place
	lock  *os.File // the bundle's lock, held by a transaction
	made  bool     // Begin created the bundle, and Abort removes it

	mu       sync.Mutex
	manifest Manifest
	tables   map[string]*tableWriter
	frames   map[frameKey]int64
	stacks   map[string]int64
	nextFrm  int64
	nextStk  int64
	dirty    bool
	err      error
	closed   bool
	stop     chan struct{}
	stopped  chan struct{}
	keyBuf   []byte

	recordFlushes bool
}

// flushBeat is how often a recording writer notes its last flush in the
// manifest when nothing else changes it.
const flushBeat = 2 * time.Second

// RecordFlushes makes the writer note in the manifest (LastFlush) when it
// last flushed rows, so that a reader of a bundle whose writer was killed
// can say up to when its tables hold data. Captures call it; the manifest
// is then rewritten at most every 2 s when only rows change.
func (w *Writer) RecordFlushes() {
	w.mu.Lock()
	w.recordFlushes = true
	w.mu.Unlock()
}

type frameKey struct {
	function, file string
	line           int64
	inlined        bool
}

func newWriter(dir string, mem memory.Allocator) *Writer {
	return &Writer{
		dir:     dir,
		mem:     mem,
		tables:  map[string]*tableWriter{},
		frames:  map[frameKey]int64{},
		stacks:  map[string]int64{},
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
}

// Create opens dir as a bundle for writing. A missing directory is created
// with manifest m and written in place; an existing bundle is opened for
// adding as a transaction (as [Begin] does), keeping its manifest (m is
// then ignored) and its frame and stack dictionaries.
func Create(dir string, m Manifest, mem memory.Allocator) (*Writer, error) {
	if _, err := os.Stat(filepath.Join(dir, ManifestFile)); err == nil {
		return begin(dir, mem)
	}
	if err := initBundle(dir, m); err != nil {
		return nil, err
	}
	w := newWriter(dir, mem)
	w.manifest, _ = readStoredManifest(dir)
	go w.flushLoop()
	return w, nil
}

// Begin starts a transaction adding to the bundle in dir, creating the
// bundle (empty, with manifest m) if it is missing. What the writer writes
// becomes part of the bundle at once when Close commits; after Abort or a
// crash the bundle is as it was (a bundle Begin created is removed again
// by Abort). Begin first finishes or removes what an interrupted
// transaction left, and fails with [ErrBusy] while another process adds
// to the bundle.
func Begin(dir string, m Manifest, mem memory.Allocator) (*Writer, error) {
	made := false
	if _, err := os.Stat(filepath.Join(dir, ManifestFile)); err != nil {
		if err := initBundle(dir, m); err != nil {
			return nil, err
		}
		made = true
	}
	w, err := begin(dir, mem)
	if err != nil {
		if made {
			os.RemoveAll(dir)
		}
		return nil, err
	}
	w.made = made
	return w, nil
}

// begin starts a transaction on an existing bundle.
func begin(dir string, mem memory.Allocator) (*Writer, error) {
	lock, err := lockBundle(dir, false)
	if err != nil {
		return nil, err
	}
	w := newWriter(dir, mem)
	w.lock = lock
	fail := func(err error) (*Writer, error) {
		if w.stage != "" {
			os.RemoveAll(w.stage)
		}
		unlock(lock)
		return nil, err
	}
	if err := recoverLocked(dir); err != nil {
		return fail(err)
	}
	if w.manifest, err = readStoredManifest(dir); err != nil {
		return fail(err)
	}
	if err := w.loadDictionaries(); err != nil {
		return fail(err)
	}
	if w.stage, err = newStaging(dir); err != nil {
		return fail(fmt.Errorf("start adding to bundle %s: %w", dir, err))
	}
	go w.flushLoop()
	return w, nil
}

// initBundle creates the bundle directory dir with manifest m.
func initBundle(dir string, m Manifest) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s exists and is not a bundle (no %s); choose a new output path", dir, ManifestFile)
	}
	if err := os.MkdirAll(filepath.Join(dir, RawDir), 0o755); err != nil {
		return fmt.Errorf("create bundle: %w", err)
	}
	if m.FormatVersion == 0 {
		m.FormatVersion = FormatVersion
		m.SchemaVersion = schema.SchemaVersion
	}
	if err := writeManifest(dir, m); err != nil {
		return fmt.Errorf("create bundle: %w", err)
	}
	return nil
}

// Dir returns the bundle directory.
func (w *Writer) Dir() string { return w.dir }

// loadDictionaries reads the frames and stacks an existing bundle holds so
// that new rows reuse their ids.
func (w *Writer) loadDictionaries() error {
	b := &Bundle{Dir: w.dir}
	if err := b.Frames(w.mem, func(f schema.Frame) {
		w.frames[frameKey{f.Function, f.File, f.Line, f.Inlined}] = f.ID
		w.nextFrm = max(w.nextFrm, f.ID)
	}); err != nil {
		return err
	}
	return b.Stacks(w.mem, func(s schema.Stack) {
		w.stacks[string(stackKey(nil, s.FrameIDs))] = s.ID
		w.nextStk = max(w.nextStk, s.ID)
	})
}

// Frames returns every frame the bundle's dictionary holds, in no
// particular order.
func (w *Writer) Frames() []StackFrame {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]StackFrame, 0, len(w.frames))
	for k := range w.frames {
		out = append(out, StackFrame{Function: k.function, File: k.file, Line: k.line, Inlined: k.inlined})
	}
	return out
}

func stackKey(buf []byte, ids []int64) []byte {
	buf = buf[:0]
	for _, id := range ids {
		buf = binary.AppendVarint(buf, id)
	}
	return buf
}

// Append adds one row to its table.
func (w *Writer) Append(r schema.Row) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.appendLocked(r)
}

func (w *Writer) appendLocked(r schema.Row) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return fmt.Errorf("bundle %s: append after close", w.dir)
	}
	tw, err := w.table(r.Table())
	if err != nil {
		w.err = err
		return err
	}
	tw.append(r)
	w.dirty = true
	if tw.pending >= tw.limit {
		w.err = w.flushLocked()
	}
	return w.err
}

func (w *Writer) table(name string) (*tableWriter, error) {
	if tw := w.tables[name]; tw != nil {
		return tw, nil
	}
	tw, err := newTableWriter(w.dir, w.stage, name, w.mem)
	if err != nil {
		return nil, err
	}
	w.tables[name] = tw
	return tw, nil
}

// FrameID returns the id of a frame, adding it to the frames table the
// first time it is seen.
func (w *Writer) FrameID(function, file string, line int64, inlined bool) (int64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.frameIDLocked(function, file, line, inlined)
}

func (w *Writer) frameIDLocked(function, file string, line int64, inlined bool) (int64, error) {
	k := frameKey{function, file, line, inlined}
	if id, ok := w.frames[k]; ok {
		return id, nil
	}
	w.nextFrm++
	id := w.nextFrm
	w.frames[k] = id
	return id, w.appendLocked(schema.Frame{ID: id, Function: function, File: file, Line: line, Inlined: inlined})
}

// StackFrame is one frame of a stack passed to [Writer.StackID].
type StackFrame struct {
	Function string
	File     string
	Line     int64
	Inlined  bool
}

// StackID returns the id of a stack (frames leaf first), adding its frames
// and the stack to the dictionaries the first time they are seen. An empty
// stack has id 0, which the tables store as null.
func (w *Writer) StackID(frames []StackFrame) (int64, error) {
	if len(frames) == 0 {
		return 0, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	ids := make([]int64, len(frames))
	for i, f := range frames {
		id, err := w.frameIDLocked(f.Function, f.File, f.Line, f.Inlined)
		if err != nil {
			return 0, err
		}
		ids[i] = id
	}
	return w.stackIDLocked(ids)
}

// StackIDOfFrames is [Writer.StackID] for frames already interned.
func (w *Writer) StackIDOfFrames(ids []int64) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stackIDLocked(ids)
}

func (w *Writer) stackIDLocked(ids []int64) (int64, error) {
	w.keyBuf = stackKey(w.keyBuf, ids)
	if id, ok := w.stacks[string(w.keyBuf)]; ok {
		return id, nil
	}
	w.nextStk++
	id := w.nextStk
	w.stacks[string(w.keyBuf)] = id
	return id, w.appendLocked(schema.Stack{ID: id, FrameIDs: append([]int64(nil), ids...)})
}

// Update changes the manifest under the writer's lock; it is written at the
// next flush.
func (w *Writer) Update(fn func(m *Manifest)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fn(&w.manifest)
	w.dirty = true
}

// Manifest returns a copy of the current manifest.
func (w *Writer) Manifest() Manifest {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.manifest
}

// Rows returns the number of rows written so far to each table touched by
// this writer (including rows copied from the existing bundle).
func (w *Writer) Rows() map[string]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int64{}
	for name, tw := range w.tables {
		out[name] = tw.rows
	}
	return out
}

// CreateRaw creates raw/NAME for an original artifact (in a transaction,
// in its staging directory; the returned name is where it will be). The
// name is made unique (name, name.1, …) and must be a plain file name.
func (w *Writer) CreateRaw(name string) (*os.File, string, error) {
	name = filepath.Base(name)
	if name == "." || name == "/" || strings.HasPrefix(name, "..") {
		return nil, "", fmt.Errorf("bad raw artifact name %q", name)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	at := w.dir
	if w.stage != "" {
		at = w.stage
	}
	base := name
	for i := 1; ; i++ {
		if w.stage != "" {
			if _, err := os.Lstat(filepath.Join(w.dir, RawDir, name)); err == nil {
				name = fmt.Sprintf("%s.%d", base, i)
				continue
			}
		}
		f, err := os.OpenFile(filepath.Join(at, RawDir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			return f, RawDir + "/" + name, nil
		}
		if !os.IsExist(err) {
			return nil, "", fmt.Errorf("create raw artifact: %w", err)
		}
		name = fmt.Sprintf("%s.%d", base, i)
	}
}

// CopyRaw stores the content of r under raw/, lists it in the manifest
// as an artifact (name and size; [Writer.Update] adds more) and returns
// the bundle-relative path and size.
func (w *Writer) CopyRaw(name string, r io.Reader) (string, int64, error) {
	f, rel, err := w.CreateRaw(name)
	if err != nil {
		return "", 0, err
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", 0, fmt.Errorf("store raw artifact %s: %w", name, err)
	}
	w.Update(func(m *Manifest) {
		m.Artifacts = append(m.Artifacts, Artifact{Name: rel, Size: n, Status: StatusComplete})
	})
	return rel, n, nil
}

// Flush writes every buffered row and the manifest now.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	if w.err != nil {
		return w.err
	}
	// Dictionaries first, so a reader never meets a stack id whose stack
	// was not yet written.
	wrote := false
	for _, name := range schema.TableNames {
		if tw := w.tables[name]; tw != nil {
			wrote = wrote || tw.pending > 0
			if err := tw.flush(); err != nil {
				w.err = err
				return err
			}
		}
	}
	if w.recordFlushes {
		if now := time.Now(); w.dirty || wrote && now.Sub(w.manifest.LastFlush) >= flushBeat {
			w.manifest.LastFlush = now
			w.dirty = true
		}
	}
	if w.dirty && w.stage == "" {
		// A transaction's manifest is written only when it commits.
		if err := writeManifest(w.dir, w.manifest); err != nil {
			w.err = fmt.Errorf("write manifest: %w", err)
			return w.err
		}
		w.dirty = false
	}
	return nil
}

func (w *Writer) flushLoop() {
	defer close(w.stopped)
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.Flush()
		}
	}
}

// Close flushes and ends every table and writes the manifest; a
// transaction commits.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.stopped

	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.err
	for _, name := range schema.TableNames {
		tw := w.tables[name]
		if tw == nil {
			continue
		}
		if err != nil {
			tw.abort()
			continue
		}
		if cerr := tw.close(); cerr != nil {
			err = cerr
		}
	}
	if w.stage == "" {
		if err != nil {
			return err
		}
		return writeManifest(w.dir, w.manifest)
	}
	defer unlock(w.lock)
	if err == nil {
		err = commit(w.dir, w.stage, w.manifest)
	}
	if err != nil {
		w.discard()
	}
	return err
}

// Abort stops the writer and discards everything it wrote. A transaction
// leaves the bundle as it was (a bundle Begin created is removed); a new
// bundle written in place loses the tables the writer created, and its
// manifest stays as it was at the last flush.
func (w *Writer) Abort() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.stopped
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, tw := range w.tables {
		tw.abort()
		if !tw.staged {
			os.Remove(tw.path)
		}
	}
	if w.stage != "" {
		w.discard()
		unlock(w.lock)
	}
}

// discard removes a transaction's staging directory, and the bundle when
// Begin created it.
func (w *Writer) discard() {
	os.RemoveAll(w.stage)
	if w.made {
		os.RemoveAll(w.dir)
	}
}

// WriteRecord appends a whole record batch of the given table (used when
// copying tables between bundles); a batch of an older bundle, without
// columns added since, gets them as nulls.
func (w *Writer) WriteRecord(table string, rec arrow.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	tw, err := w.table(table)
	if err != nil {
		return err
	}
	if err := tw.flush(); err != nil {
		return err
	}
	tw.rows += rec.NumRows()
	return tw.writeWidened(rec)
}
