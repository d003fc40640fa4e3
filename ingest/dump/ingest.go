package dump

import (
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// maxPending bounds how many "stack unavailable" goroutines Ingest holds
// back waiting for a later block with their stack.
const maxPending = 1024

// Ingest reads the goroutine dump or crash traceback in r and appends one
// row per goroutine to the goroutines table of w: snapshot_ts is
// a.Time.UnixNano() (0 when a.Time is zero: a dump carries no time of its
// own), source is a.Name, stack_id interns the frames, creator_stack_id the
// one-frame stack of the "created by" frame.
//
// Each access of each race-detector report becomes a row of the races
// table (see [schema.RacesSchema]), its stacks interned like goroutines'.
//
// It fills a.Kind ("dump"), a.Rows (goroutine and race rows), a.Fatal
// (the runtime's "fatal error: " message, see [Reader.Fatal]), a.Status
// ([bundle.StatusComplete], or [bundle.StatusTruncated] with a.Detail
// saying where the input was cut off), a.Detail with the reader's notes
// (blocks other output interrupted, see [Reader.Notes]) and a.Size when it
// was 0; a.Time is left as it is. On error a.Status is
// [bundle.StatusFailed], the error says what is wrong, and rows already
// appended stay in w (call w.Abort to drop them). Ingest neither copies r
// under raw/ nor edits the manifest; the caller does both.
//
// Rows are written as goroutines are read, so memory does not grow with
// the input. Two kinds of block are not written as they are: "goroutine
// 0" blocks of a crash (the stacks of Ms, not goroutines) are skipped, and
// a goroutine printed as "running on other thread; stack unavailable" is
// held back until the end of input (at most 1024 of them), because with
// GOTRACEBACK=crash the M running it prints it again later, with its stack;
// that later block replaces it.
//
// The input is parsed by a worker per CPU (see par.go) into the rows the
// sequential reader would give; the rows are appended in input order.
func Ingest(w *bundle.Writer, r io.Reader, a *bundle.Artifact) error {
	return ingest(w, r, a, ingestOptions())
}

// ingest is Ingest reading with options o.
func ingest(w *bundle.Writer, r io.Reader, a *bundle.Artifact, o readOptions) error {
	a.Kind = bundle.SourceDump
	a.Rows = 0
	var ts int64
	if !a.Time.IsZero() {
		ts = a.Time.UnixNano()
	}
	in := ingester{w: w, ts: ts, source: a.Name, pending: map[int64]schema.Goroutine{}, cols: newGoroutineCols(memory.DefaultAllocator)}
	defer in.cols.release()
	in.bw = newBatchWriter(w, in.cols)
	rd := newReader(r, o)
	err := in.run(rd)
	rd.stop()
	if ferr := in.flushCols(); err == nil {
		err = ferr
	}
	if cerr := in.bw.close(); err == nil {
		err = cerr
	}
	a.Rows = in.rows
	if a.Size == 0 {
		a.Size = rd.Bytes()
	}
	if err != nil {
		a.Status = bundle.StatusFailed
		a.Detail = err.Error()
		return fmt.Errorf("ingest goroutine dump %s: %w", a.Name, err)
	}
	if err := in.races(rd.Races()); err != nil {
		a.Status = bundle.StatusFailed
		a.Detail = err.Error()
		return fmt.Errorf("ingest goroutine dump %s: %w", a.Name, err)
	}
	a.Rows = in.rows
	a.Status = bundle.StatusComplete
	a.Detail = rd.Notes()
	a.Fatal = rd.Fatal()
	if rd.Truncated() {
		a.Status = bundle.StatusTruncated
		a.Detail = joinNotes(rd.TruncationDetail(), a.Detail)
	}
	return nil
}

func joinNotes(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

// races appends one races row per access of each report.
func (in *ingester) races(rs []Race) error {
	for i, race := range rs {
		for _, acc := range race.Accesses {
			row := schema.Race{SnapshotTS: in.ts, Race: int64(i + 1), Access: acc.Op, Addr: int64(acc.Addr), Goid: acc.Goid,
				GoroutineState: acc.State, Location: race.Location, Source: in.source}
			var err error
			if row.StackID, err = in.stack(acc.Frames); err != nil {
				return fmt.Errorf("race report at line %d: %w", race.Line, err)
			}
			if row.CreationStackID, err = in.stack(acc.CreatedAt); err != nil {
				return fmt.Errorf("race report at line %d: %w", race.Line, err)
			}
			if err := in.w.Append(row); err != nil {
				return fmt.Errorf("append race report at line %d: %w", race.Line, err)
			}
			in.rows++
		}
	}
	return nil
}

// stack interns frames as a stack.
func (in *ingester) stack(frames []Frame) (int64, error) {
	in.frames = in.frames[:0]
	for _, f := range frames {
		in.frames = append(in.frames, bundle.StackFrame{Function: f.Function, File: f.File, Line: f.Line, Inlined: f.Inlined})
	}
	return in.stacks.id(in.w, in.frames)
}

type ingester struct {
	w       *bundle.Writer
	ts      int64
	source  string
	rows    int64
	frames  []bundle.StackFrame
	args    []string // FrameArgs of the row being built, reused
	pending map[int64]schema.Goroutine
	stacks  stackCache
	cols    *goroutineCols // the batch being filled
	bw      *batchWriter
}

func (in *ingester) run(rd *Reader) error {
	for {
		g, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if g.ID == 0 {
			continue
		}
		row, err := in.row(g)
		if err != nil {
			return err
		}
		if g.StackUnavailable && len(g.Frames) == 0 && len(in.pending) < maxPending {
			in.pending[g.ID] = row
			continue
		}
		delete(in.pending, g.ID)
		if err := in.append(&row); err != nil {
			return err
		}
	}
	ids := make([]int64, 0, len(in.pending))
	for id := range in.pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		row := in.pending[id]
		if err := in.append(&row); err != nil {
			return err
		}
	}
	return nil
}

// append adds row to the batch of goroutines rows, written once full.
func (in *ingester) append(row *schema.Goroutine) error {
	in.cols.append(row)
	in.rows++
	if in.cols.len() >= colBatchRows || in.cols.textFull() {
		if err := in.flushCols(); err != nil {
			return fmt.Errorf("append goroutine %d: %w", row.Goid, err)
		}
	}
	return nil
}

// flushCols hands the batch of goroutines rows to the batch writer.
func (in *ingester) flushCols() error {
	if in.cols.len() == 0 {
		return nil
	}
	var err error
	in.cols, err = in.bw.send(in.cols)
	return err
}

// row builds the goroutines row of g, interning its stacks.
func (in *ingester) row(g *Goroutine) (schema.Goroutine, error) {
	row := schema.Goroutine{
		SnapshotTS:   in.ts,
		Goid:         g.ID,
		State:        g.State,
		WaitMinutes:  g.WaitMinutes,
		LockedThread: g.LockedToThread,
		CreatorGoid:  g.CreatorGoid,
		Labels:       g.Labels,
		FramesElided: g.FramesElided,
		Source:       in.source,
	}
	in.frames, in.args = in.frames[:0], in.args[:0]
	for _, f := range g.Frames {
		in.frames = append(in.frames, bundle.StackFrame{Function: f.Function, File: f.File, Line: f.Line, Inlined: f.Inlined})
		in.args = append(in.args, f.Args)
	}
	if len(g.Frames) > 0 {
		row.FrameArgs = in.args
	}
	var err error
	if row.StackID, err = in.stacks.id(in.w, in.frames); err != nil {
		return row, fmt.Errorf("goroutine %d at line %d: %w", g.ID, g.Line, err)
	}
	if c := g.CreatedBy; c != nil {
		row.CreatorFunction = c.Function
		in.frames = append(in.frames[:0], bundle.StackFrame{Function: c.Function, File: c.File, Line: c.Line})
		if row.CreatorStackID, err = in.stacks.id(in.w, in.frames); err != nil {
			return row, fmt.Errorf("goroutine %d at line %d: %w", g.ID, g.Line, err)
		}
	}
	return row, nil
}
