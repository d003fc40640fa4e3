package analysis

import (
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// traceG is one goroutine seen in traces, merged over trace windows by
// goid as ingest/gotrace documents: creation fields from the row that has
// them, the non-null end, the last state of the latest window.
type traceG struct {
	parent        int64
	created       int64
	ended         int64
	creationStack int64
	startFn       string
	lastState     string
	lastReason    string
	lastStack     int64
	rank          int64 // orders windows: ended_ts, or the row index for alive rows
}

// readTraceGoroutines reads and merges the trace_goroutines table.
func readTraceGoroutines(b *bundle.Bundle, mem memory.Allocator) (map[int64]*traceG, error) {
	out := map[int64]*traceG{}
	in := interner{}
	var row int64
	err := b.ReadTable(schema.TableTraceGoroutines, mem, func(rec arrow.Record) error {
		c := cols{rec}
		goid, parent := c.i64(schema.ColGoid), c.i64(schema.ColParentGoid)
		created, ended := c.i64(schema.ColCreatedTS), c.i64(schema.ColEndedTS)
		cstack, startFn := c.i64(schema.ColCreationStackID), c.str(schema.ColStartFunction)
		lstate, lreason, lstack := c.str(schema.ColLastState), c.str(schema.ColLastReason), c.i64(schema.ColLastStackID)
		for r := 0; r < int(rec.NumRows()); r++ {
			row++
			id := goid(r)
			g := out[id]
			if g == nil {
				g = &traceG{}
				out[id] = g
			}
			if cr := created(r); cr != 0 {
				g.created, g.parent, g.creationStack = cr, parent(r), cstack(r)
				if fn := startFn(r); fn != "" {
					g.startFn = in.get(fn)
				}
			} else if g.parent == 0 {
				g.parent = parent(r)
			}
			if g.startFn == "" {
				g.startFn = in.get(startFn(r))
			}
			e := ended(r)
			if e != 0 {
				g.ended = e
			}
			rank := row
			if e != 0 {
				rank = 1 << 62 // the window where it ended is its last
			}
			if rank >= g.rank {
				g.rank = rank
				g.lastState, g.lastReason, g.lastStack = in.get(lstate(r)), in.get(lreason(r)), lstack(r)
			}
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read trace goroutines: %w", err)
	}
	return out, nil
}

// ebpfG is one goroutine seen by the eBPF probes. lost is, for one seen
// created and not exit, when the probes were detached after it (see
// probeCoverage.lostAfter): it may have exited unseen after that.
type ebpfG struct {
	parent, created, ended, stack, lost int64
}

// readEBPFGoroutines reads go_create and go_exit events and the windows
// of the probes.
func readEBPFGoroutines(b *bundle.Bundle, mem memory.Allocator) (map[int64]*ebpfG, error) {
	cov, err := readProbeCoverage(b, mem)
	if err != nil {
		return nil, err
	}
	out := map[int64]*ebpfG{}
	err = b.ReadTable(schema.TableEBPFEvents, mem, func(rec arrow.Record) error {
		c := cols{rec}
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
				g = &ebpfG{}
				out[id] = g
			}
			if k == schema.EventGoCreate {
				g.parent, g.created, g.stack = parent(r), ts(r), stack(r)
			} else {
				g.ended = ts(r)
			}
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read ebpf events: %w", err)
	}
	for _, g := range out {
		if g.ended == 0 && g.created != 0 {
			g.lost = cov.lostAfter(g.created)
		}
	}
	return out, nil
}

// spanRec is one task or region.
type spanRec struct {
	id, parent, goid, task int64
	start, end             int64
	kind, name             string
}

// readSpans reads tasks and regions (logs are skipped), merging task rows
// of several windows by id.
func readSpans(b *bundle.Bundle, mem memory.Allocator) ([]*spanRec, error) {
	byID := map[int64]*spanRec{}
	var out []*spanRec
	in := interner{}
	err := b.ReadTable(schema.TableSpans, mem, func(rec arrow.Record) error {
		c := cols{rec}
		id, parent, kind, name := c.i64(schema.ColSpanID), c.i64(schema.ColParentSpanID), c.str(schema.ColKind), c.str(schema.ColName)
		goid, task, start, end := c.i64(schema.ColGoid), c.i64(schema.ColTaskID), c.i64(schema.ColStartTS), c.i64(schema.ColEndTS)
		for r := 0; r < int(rec.NumRows()); r++ {
			k := kind(r)
			if k != schema.SpanTask && k != schema.SpanRegion {
				continue
			}
			s := &spanRec{id: id(r), parent: parent(r), goid: goid(r), task: task(r), start: start(r), end: end(r), kind: in.get(k), name: in.get(name(r))}
			if old := byID[s.id]; old != nil && s.kind == schema.SpanTask {
				if s.start != 0 && (old.start == 0 || s.start < old.start) {
					old.start = s.start
				}
				if s.end != 0 {
					old.end = s.end
				}
				if old.goid == 0 {
					old.goid = s.goid
				}
				continue
			}
			byID[s.id] = s
			out = append(out, s)
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read spans: %w", err)
	}
	return out, nil
}
