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

// Transitions returns every state change of the goroutines goids in the
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
// which only a per-goroutine view reads): Transitions decodes them from
// the raw traces the bundle keeps, reading only the generations, listed
// in trace_generations, in which one of the goroutines was alive, several
// at once. Bundles made before trace_generations existed are read from
// their trace_transitions table instead, which lacks runnable → running.
func Transitions(b *bundle.Bundle, goids []int64, from, to int64) ([]schema.Transition, error) {
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
		out, err = decodeTransitions(b, mem, gens, want, from, to)
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
// lived and that overlap [from, to].
func decodeTransitions(b *bundle.Bundle, mem memory.Allocator, gens []schema.TraceGeneration, want map[int64]bool, from, to int64) ([]schema.Transition, error) {
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
	files := &rawFiles{dir: b.Dir, open: map[string]*rawFile{}}
	defer files.close()
	results := make([][]schema.Transition, len(pick))
	errs := make([]error, len(pick))
	var next sync.Mutex
	n := 0
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(pick)) {
		wg.Go(func() {
			for {
				next.Lock()
				k := n
				n++
				next.Unlock()
				if k >= len(pick) {
					return
				}
				g := &gens[pick[k]]
				results[k], errs[k] = files.decode(g, want, ids, from, to)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return dropRepeats(gens, pick, results), nil
}

// dropRepeats drops the undetermined → state rows that each generation
// after a goroutine's first repeats (a generation read alone begins with
// every goroutine's status), keeping the first appearance in each trace.
func dropRepeats(gens []schema.TraceGeneration, pick []int, results [][]schema.Transition) []schema.Transition {
	type key struct {
		source string
		goid   int64
	}
	last := map[key]string{}
	var out []schema.Transition
	for k, rows := range results {
		src := gens[pick[k]].Source
		for _, t := range rows {
			kk := key{src, t.Goid}
			if prev, ok := last[kk]; ok && t.From == goStateNames[trace.GoUndetermined] && t.To == prev {
				continue
			}
			last[kk] = t.To
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

// rawFiles opens each raw trace once.
type rawFiles struct {
	dir  string
	mu   sync.Mutex
	open map[string]*rawFile
}

type rawFile struct {
	f    *os.File
	head []byte
	err  error
}

func (r *rawFiles) get(source string) *rawFile {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rf := r.open[source]; rf != nil {
		return rf
	}
	rf := &rawFile{}
	r.open[source] = rf
	if source == "" || !filepath.IsLocal(source) || !strings.HasPrefix(source, bundle.RawDir+"/") {
		rf.err = fmt.Errorf("trace %q is not a raw file of the bundle", source)
		return rf
	}
	rf.f, rf.err = os.Open(filepath.Join(r.dir, source))
	if rf.err != nil {
		return rf
	}
	rf.head = make([]byte, headerLen)
	if _, err := rf.f.ReadAt(rf.head, 0); err != nil || !Looks(rf.head) {
		rf.err = fmt.Errorf("%s does not start with a Go execution trace header (compressed traces are not decoded on demand yet)", source)
	}
	return rf
}

func (r *rawFiles) close() {
	for _, rf := range r.open {
		if rf.f != nil {
			rf.f.Close()
		}
	}
}

// decode reads generation g alone and returns the wanted goroutines'
// state changes in [from, to].
func (r *rawFiles) decode(g *schema.TraceGeneration, want map[int64]bool, ids map[string]int64, from, to int64) (out []schema.Transition, err error) {
	rf := r.get(g.Source)
	if rf.err != nil {
		return nil, rf.err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("trace parser failed: %v", p)
		}
		if err != nil {
			err = fmt.Errorf("%s generation %d: %w", g.Source, g.Generation, err)
		}
	}()
	tr, err := trace.NewReader(io.MultiReader(bytes.NewReader(rf.head), io.NewSectionReader(rf.f, g.Offset, g.Length)))
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
