package tables

import (
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// TraceG is one goroutine seen in traces, merged over trace windows by
// goid as ingest/gotrace documents: creation fields from the row that has
// them, the non-null end, the last state of the latest window.
type TraceG struct {
	Parent        int64
	Created       int64
	Ended         int64
	CreationStack int64
	StartFn       string
	LastState     string
	LastReason    string
	LastStack     int64
	rank          int64 // orders windows: ended_ts, or the row index for alive rows
}

// ReadTraceGoroutines reads and merges the trace_goroutines table.
func ReadTraceGoroutines(b *bundle.Bundle, mem memory.Allocator) (map[int64]*TraceG, error) {
	out := map[int64]*TraceG{}
	in := Interner{}
	var row int64
	err := b.ReadTable(schema.TableTraceGoroutines, mem, func(rec arrow.Record) error {
		c := cols{rec: rec}
		goid, parent := c.i64(schema.ColGoid), c.i64(schema.ColParentGoid)
		created, ended := c.i64(schema.ColCreatedTS), c.i64(schema.ColEndedTS)
		cstack, startFn := c.i64(schema.ColCreationStackID), c.str(schema.ColStartFunction)
		lstate, lreason, lstack := c.str(schema.ColLastState), c.str(schema.ColLastReason), c.i64(schema.ColLastStackID)
		for r := 0; r < int(rec.NumRows()); r++ {
			row++
			id := goid(r)
			g := out[id]
			if g == nil {
				g = &TraceG{}
				out[id] = g
			}
			if cr := created(r); cr != 0 {
				g.Created, g.Parent, g.CreationStack = cr, parent(r), cstack(r)
				if fn := startFn(r); fn != "" {
					g.StartFn = in.Get(fn)
				}
			} else if g.Parent == 0 {
				g.Parent = parent(r)
			}
			if g.StartFn == "" {
				g.StartFn = in.Get(startFn(r))
			}
			e := ended(r)
			if e != 0 {
				g.Ended = e
			}
			rank := row
			if e != 0 {
				rank = 1 << 62 // the window where it ended is its last
			}
			if rank >= g.rank {
				g.rank = rank
				g.LastState, g.LastReason, g.LastStack = in.Get(lstate(r)), in.Get(lreason(r)), lstack(r)
			}
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read trace goroutines: %w", err)
	}
	return out, nil
}

// EBPFG is one goroutine seen by the eBPF probes. lost is, for one seen
// created and not exit, when the probes were detached after it (see
// probeCoverage.lostAfter): it may have exited unseen after that.
type EBPFG struct {
	Parent, Created, Ended, Stack, Lost int64
}

// ReadEBPFGoroutines reads go_create and go_exit events and the windows
// of the probes.
func ReadEBPFGoroutines(b *bundle.Bundle, mem memory.Allocator) (map[int64]*EBPFG, error) {
	cov, err := readProbeCoverage(b, mem)
	if err != nil {
		return nil, err
	}
	out := map[int64]*EBPFG{}
	err = b.ReadTable(schema.TableEBPFEvents, mem, func(rec arrow.Record) error {
		c := cols{rec: rec}
		ts, kind, goid, parent, stack := c.i64(schema.ColTS), c.str(schema.ColKind), c.i64(schema.ColGoid), c.i64(schema.ColParentGoid), c.i64(schema.ColStackID)
		for r := 0; r < int(rec.NumRows()); r++ {
			k := kind(r)
			if k != schema.EventGoCreate && k != schema.EventGoExit {
				continue
			}
			id := goid(r)
			if id == 0 {
				continue
			}
			g := out[id]
			if g == nil {
				g = &EBPFG{}
				out[id] = g
			}
			if k == schema.EventGoCreate {
				g.Parent, g.Created, g.Stack = parent(r), ts(r), stack(r)
			} else {
				g.Ended = ts(r)
			}
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read ebpf events: %w", err)
	}
	for _, g := range out {
		if g.Ended == 0 && g.Created != 0 {
			g.Lost = cov.lostAfter(g.Created)
		}
	}
	return out, nil
}

// SpanRec is one task or region.
type SpanRec struct {
	ID, Parent, Goid, Task int64
	Start, End             int64
	Kind, Name             string
}

// ReadSpans reads tasks and regions (logs are skipped), merging task rows
// of several windows by id.
func ReadSpans(b *bundle.Bundle, mem memory.Allocator) ([]*SpanRec, error) {
	byID := map[int64]*SpanRec{}
	var out []*SpanRec
	in := Interner{}
	err := b.ReadTable(schema.TableSpans, mem, func(rec arrow.Record) error {
		c := cols{rec: rec}
		id, parent, kind, name := c.i64(schema.ColSpanID), c.i64(schema.ColParentSpanID), c.str(schema.ColKind), c.str(schema.ColName)
		goid, task, start, end := c.i64(schema.ColGoid), c.i64(schema.ColTaskID), c.i64(schema.ColStartTS), c.i64(schema.ColEndTS)
		for r := 0; r < int(rec.NumRows()); r++ {
			k := kind(r)
			if k != schema.SpanTask && k != schema.SpanRegion {
				continue
			}
			s := &SpanRec{ID: id(r), Parent: parent(r), Goid: goid(r), Task: task(r), Start: start(r), End: end(r), Kind: in.Get(k), Name: in.Get(name(r))}
			if old := byID[s.ID]; old != nil && s.Kind == schema.SpanTask {
				if s.Start != 0 && (old.Start == 0 || s.Start < old.Start) {
					old.Start = s.Start
				}
				if s.End != 0 {
					old.End = s.End
				}
				if old.Goid == 0 {
					old.Goid = s.Goid
				}
				continue
			}
			byID[s.ID] = s
			out = append(out, s)
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read spans: %w", err)
	}
	return out, nil
}
