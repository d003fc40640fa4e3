package gotrace

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"golang.org/x/exp/trace"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// RawOpener opens a raw artifact of a bundle, named as in the manifest
// (raw/NAME), and returns its content decompressed.
type RawOpener func(b *bundle.Bundle, name string) (io.ReadCloser, error)

// TransitionsFrom returns every state change of the goroutines goids in the
// bundle's execution traces whose time overlaps [from, to] (wall-clock
// Unix nanoseconds; 0 leaves that end open), sorted by goroutine, then
// time. States are running, runnable, waiting (Reason says on what:
// "chan receive", "select", "sync", "sleep", …), syscall and notexist
// (before its creation, after its end); a goroutine already alive when a
// trace window began first appears as undetermined → its state. StackID
// is the bundle stack where the change happened (where it blocked, for a
// block; the creator's, for a creation), 0 when the trace has none.
//
// Ingest does not store these rows (tens of millions in a busy trace,
// which only a per-goroutine view reads): TransitionsFrom decodes them from
// the raw traces the bundle keeps, reading only the generations, listed
// in trace_generations, in which one of the goroutines was alive, several
// at once. Bundles made before trace_generations existed are read from
// their trace_transitions table instead, which lacks runnable → running.
//
// Raw traces kept compressed (a trace.out.gz ingested as it was) are
// decompressed by open (package ingest has the one decompressor) and read
// from their start, skipping the generations not needed; plain raw traces
// are read where the generations lie either way. A nil open reads plain
// files only.
func TransitionsFrom(b *bundle.Bundle, open RawOpener, goids []int64, from, to int64) ([]schema.Transition, error) {
	mem := memory.DefaultAllocator
	if len(goids) == 0 {
		return nil, nil
	}
	if to == 0 {
		to = math.MaxInt64
	}
	want := make(map[int64]bool, len(goids))
	for _, g := range goids {
		want[g] = true
	}
	gens, err := readGenerations(b, mem)
	if err != nil {
		return nil, err
	}
	var out []schema.Transition
	if len(gens) == 0 {
		out, err = readTransitionTable(b, mem, want, from, to)
	} else {
		out, err = decodeTransitions(b, open, mem, gens, want, from, to)
	}
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b schema.Transition) int {
		return cmp.Or(cmp.Compare(a.Goid, b.Goid), cmp.Compare(a.TS, b.TS))
	})
	return out, nil
}

// readGenerations reads the trace_generations table, in order.
func readGenerations(b *bundle.Bundle, mem memory.Allocator) ([]schema.TraceGeneration, error) {
	var out []schema.TraceGeneration
	err := b.ReadTable(schema.TableTraceGenerations, mem, func(rec arrow.Record) error {
		c := columns(rec)
		src := bundle.NewStrings(c[schema.ColSource])
		for i := 0; i < int(rec.NumRows()); i++ {
			out = append(out, schema.TraceGeneration{
				Source:       src.Value(i),
				Generation:   c.i64(schema.ColGeneration, i),
				Offset:       c.i64(schema.ColOffset, i),
				Length:       c.i64(schema.ColLength, i),
				StartTS:      c.i64(schema.ColStartTS, i),
				EndTS:        c.i64(schema.ColEndTS, i),
				WallOffsetNS: c.i64(schema.ColWallOffsetNS, i),
				MonoOffsetNS: c.i64(schema.ColMonoOffsetNS, i),
			})
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read %s: %w", schema.TableTraceGenerations, err)
	}
	return out, nil
}

// lifespans returns, for each wanted goroutine seen in a trace, the wall
// time from its creation (or math.MinInt64 when a window began with it
// alive) to its end (or math.MaxInt64 when a window ended with it alive).
func lifespans(b *bundle.Bundle, mem memory.Allocator, want map[int64]bool) (map[int64][2]int64, error) {
	spans := map[int64][2]int64{}
	err := b.ReadTable(schema.TableTraceGoroutines, mem, func(rec arrow.Record) error {
		c := columns(rec)
		for i := 0; i < int(rec.NumRows()); i++ {
			g := c.i64(schema.ColGoid, i)
			if !want[g] {
				continue
			}
			lo, hi := c.i64(schema.ColCreatedTS, i), c.i64(schema.ColEndedTS, i)
			if lo == 0 {
				lo = math.MinInt64
			}
			if hi == 0 {
				hi = math.MaxInt64
			}
			if s, ok := spans[g]; ok {
				lo, hi = min(lo, s[0]), max(hi, s[1])
			}
			spans[g] = [2]int64{lo, hi}
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read %s: %w", schema.TableTraceGoroutines, err)
	}
	return spans, nil
}

// decodeTransitions decodes the generations in which a wanted goroutine
// lived and that overlap [from, to]: one goroutine finds each one's bytes
// in its raw trace, others decode them.
func decodeTransitions(b *bundle.Bundle, open RawOpener, mem memory.Allocator, gens []schema.TraceGeneration, want map[int64]bool, from, to int64) ([]schema.Transition, error) {
	spans, err := lifespans(b, mem, want)
	if err != nil {
		return nil, err
	}
	var pick []int
	for i, g := range gens {
		if g.EndTS < from || g.StartTS > to {
			continue
		}
		for _, s := range spans {
			if s[0] <= g.EndTS && s[1] >= g.StartTS {
				pick = append(pick, i)
				break
			}
		}
	}
	if len(pick) == 0 {
		return nil, nil
	}
	ids, err := stackIndex(b, mem)
	if err != nil {
		return nil, err
	}
	type job struct {
		k    int
		head []byte
		r    io.Reader
	}
	workers := min(runtime.GOMAXPROCS(0), len(pick))
	jobs := make(chan job, workers)
	results := make([][]schema.Transition, len(pick))
	errs := make([]error, len(pick)+1)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				g := &gens[pick[j.k]]
				results[j.k], errs[j.k] = decodeGeneration(g, j.head, j.r, want, ids, from, to)
				if errs[j.k] != nil {
					errs[j.k] = fmt.Errorf("%s generation %d: %w", g.Source, g.Generation, errs[j.k])
				}
			}
		})
	}
	raws := &rawFiles{b: b, open: open, files: map[string]*rawFile{}}
	errs[len(pick)] = func() error {
		defer close(jobs)
		for k, i := range pick {
			head, r, err := raws.generation(&gens[i])
			if err != nil {
				return err
			}
			jobs <- job{k, head, r}
		}
		return nil
	}()
	wg.Wait()
	raws.close()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return joinGenerations(gens, pick, results), nil
}

// joinGenerations joins the rows of generations decoded alone, in their
// order, into the rows one read of each trace gives. It drops the
// undetermined → state rows that each generation after a goroutine's
// first repeats (a generation read alone begins with every goroutine's
// status), keeping the first appearance in each trace. It keeps each
// goroutine's rows in the trace's order: a generation read alone keeps
// the timestamps its batches carry, and its first events may be stamped
// before the last ones of the generation before (reading the whole trace,
// x/exp/trace raises such a timestamp to 1 ns after the one before it);
// such a row's times are raised the same way, so that sorting by time
// keeps the order.
func joinGenerations(gens []schema.TraceGeneration, pick []int, results [][]schema.Transition) []schema.Transition {
	type key struct {
		source string
		goid   int64
	}
	last := map[key]schema.Transition{}
	var out []schema.Transition
	for k, rows := range results {
		src := gens[pick[k]].Source
		for _, t := range rows {
			kk := key{src, t.Goid}
			prev, seen := last[kk]
			if seen && t.From == goStateNames[trace.GoUndetermined] && t.To == prev.To {
				continue
			}
			if seen && t.TS <= prev.TS {
				d := prev.TS + 1 - t.TS
				t.TS += d
				t.MonoNS += d
			}
			last[kk] = t
			out = append(out, t)
		}
	}
	return out
}

// stackIndex maps a stack's content key (see stackKeyAppend) to its
// bundle stack id.
func stackIndex(b *bundle.Bundle, mem memory.Allocator) (map[string]int64, error) {
	frames := map[int64]schema.Frame{}
	if err := b.Frames(mem, func(f schema.Frame) { frames[f.ID] = f }); err != nil {
		return nil, err
	}
	ids := map[string]int64{}
	var key []byte
	err := b.Stacks(mem, func(s schema.Stack) {
		key = key[:0]
		for _, id := range s.FrameIDs {
			f := frames[id]
			key = stackKeyAppend(key, f.Function, f.File, uint64(f.Line))
		}
		ids[string(key)] = s.ID
	})
	return ids, err
}

// rawFiles gives the bytes of generations, in the order of their
// offsets within each raw trace: from a plain trace where they lie, from
// a compressed one by reading on through its decompressed content.
type rawFiles struct {
	b     *bundle.Bundle
	open  RawOpener
	files map[string]*rawFile
}

type rawFile struct {
	head []byte
	f    *os.File      // a plain trace
	rc   io.ReadCloser // decompressed content of a compressed one
	pos  int64         // of rc
}

func (r *rawFiles) get(source string) (*rawFile, error) {
	if rf := r.files[source]; rf != nil {
		return rf, nil
	}
	if source == "" || !filepath.IsLocal(source) || !strings.HasPrefix(source, bundle.RawDir+"/") {
		return nil, fmt.Errorf("trace %q is not a raw file of the bundle", source)
	}
	f, err := os.Open(filepath.Join(r.b.Dir, source))
	if err != nil {
		return nil, err
	}
	rf := &rawFile{f: f, head: make([]byte, headerLen)}
	r.files[source] = rf
	if _, err := f.ReadAt(rf.head, 0); err == nil && Looks(rf.head) {
		return rf, nil
	}
	if r.open == nil {
		return nil, fmt.Errorf("%s does not start with a Go execution trace header (a compressed trace needs a decompressor)", source)
	}
	f.Close()
	rf.f = nil
	if rf.rc, err = r.open(r.b, source); err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(rf.rc, rf.head); err != nil || !Looks(rf.head) {
		return nil, fmt.Errorf("%s does not hold a Go execution trace", source)
	}
	rf.pos = headerLen
	return rf, nil
}

// generation returns the header of g's trace and a reader of g's bytes.
func (r *rawFiles) generation(g *schema.TraceGeneration) ([]byte, io.Reader, error) {
	rf, err := r.get(g.Source)
	if err != nil {
		return nil, nil, err
	}
	if rf.f != nil {
		return rf.head, io.NewSectionReader(rf.f, g.Offset, g.Length), nil
	}
	if g.Offset < rf.pos {
		return nil, nil, fmt.Errorf("%s: generation %d at byte %d comes before byte %d", g.Source, g.Generation, g.Offset, rf.pos)
	}
	if _, err := io.CopyN(io.Discard, rf.rc, g.Offset-rf.pos); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", g.Source, err)
	}
	if g.Length > maxGeneration {
		return nil, nil, fmt.Errorf("%s: generation %d claims %d bytes", g.Source, g.Generation, g.Length)
	}
	data := make([]byte, g.Length)
	if _, err := io.ReadFull(rf.rc, data); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", g.Source, err)
	}
	rf.pos = g.Offset + g.Length
	return rf.head, bytes.NewReader(data), nil
}

// maxGeneration bounds a generation read into memory from a compressed
// trace (the index is the bundle's own, but a bundle may be hostile).
const maxGeneration = 1 << 30

func (r *rawFiles) close() {
	for _, rf := range r.files {
		if rf.f != nil {
			rf.f.Close()
		}
		if rf.rc != nil {
			rf.rc.Close()
		}
	}
}

// decodeGeneration reads one generation alone (head, then its bytes from
// r) and returns the wanted goroutines' state changes in [from, to].
func decodeGeneration(g *schema.TraceGeneration, head []byte, r io.Reader, want map[int64]bool, ids map[string]int64, from, to int64) (out []schema.Transition, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("trace parser failed: %v", p)
		}
	}()
	tr, err := trace.NewReader(io.MultiReader(bytes.NewReader(head), r))
	if err != nil {
		return nil, err
	}
	stacks := map[trace.Stack]int64{}
	var key []byte
	stackID := func(s trace.Stack) int64 {
		if s == trace.NoStack {
			return 0
		}
		id, ok := stacks[s]
		if !ok {
			key = key[:0]
			for f := range s.Frames() {
				key = stackKeyAppend(key, f.Func, f.File, f.Line)
			}
			id = ids[string(key)]
			stacks[s] = id
		}
		return id
	}
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if ev.Kind() != trace.EventStateTransition {
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		goid := int64(st.Resource.Goroutine())
		f, t := st.Goroutine()
		if f == t || !want[goid] {
			continue
		}
		ts := int64(ev.Time())
		wall := ts + g.WallOffsetNS
		if wall < from || wall > to {
			continue
		}
		stack := st.Stack
		if f == trace.GoNotExist {
			stack = ev.Stack() // the creator's
		}
		out = append(out, schema.Transition{
			TS: wall, MonoNS: ts + g.MonoOffsetNS, Goid: goid,
			From: stateName(f), To: stateName(t), Reason: st.Reason, StackID: stackID(stack),
		})
	}
}

// readTransitionTable reads the wanted rows of an older bundle's
// trace_transitions table.
func readTransitionTable(b *bundle.Bundle, mem memory.Allocator, want map[int64]bool, from, to int64) ([]schema.Transition, error) {
	var out []schema.Transition
	err := b.ReadTable(schema.TableTraceTransitions, mem, func(rec arrow.Record) error {
		c := columns(rec)
		fromS, toS, reason := bundle.NewStrings(c[schema.ColFrom]), bundle.NewStrings(c[schema.ColTo]), bundle.NewStrings(c[schema.ColReason])
		for i := 0; i < int(rec.NumRows()); i++ {
			g, ts := c.i64(schema.ColGoid, i), c.i64(schema.ColTS, i)
			if !want[g] || ts < from || ts > to {
				continue
			}
			out = append(out, schema.Transition{
				TS: ts, MonoNS: c.i64(schema.ColMonoNS, i), Goid: g,
				From: fromS.Value(i), To: toS.Value(i), Reason: reason.Value(i), StackID: c.i64(schema.ColStackID, i),
			})
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read %s: %w", schema.TableTraceTransitions, err)
	}
	return out, nil
}

// recordColumns finds a record's columns by name.
type recordColumns map[string]arrow.Array

func columns(rec arrow.Record) recordColumns {
	c := recordColumns{}
	for i, f := range rec.Schema().Fields() {
		c[f.Name] = rec.Column(i)
	}
	return c
}

// i64 reads an int64 or timestamp column; null (or a missing column) is 0.
func (c recordColumns) i64(name string, i int) int64 {
	a := c[name]
	if a == nil || a.IsNull(i) {
		return 0
	}
	switch a := a.(type) {
	case *array.Int64:
		return a.Value(i)
	case *array.Timestamp:
		return int64(a.Value(i))
	}
	return 0
}
