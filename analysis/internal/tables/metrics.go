package tables

import (
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// ReadMetrics calls each with every row of the metrics table (none when
// the bundle has no such table); strings point into Arrow memory.
func ReadMetrics(b *bundle.Bundle, mem memory.Allocator, each func(schema.Metric)) error {
	err := b.ReadTable(schema.TableMetrics, mem, func(rec arrow.Record) error {
		c := cols{rec: rec}
		ts, name, val, src := c.i64(schema.ColTS), c.str(schema.ColName), c.f64(schema.ColValue), c.str(schema.ColSource)
		for r := 0; r < int(rec.NumRows()); r++ {
			each(schema.Metric{TS: ts(r), Name: name(r), Value: val(r), Source: src(r)})
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return fmt.Errorf("read metrics: %w", err)
	}
	return nil
}

// ReadGCStarts returns the times of the GC cycles' starts the eBPF
// probes saw, in row order.
func ReadGCStarts(b *bundle.Bundle, mem memory.Allocator) ([]int64, error) {
	var out []int64
	err := b.ReadTable(schema.TableEBPFEvents, mem, func(rec arrow.Record) error {
		c := cols{rec: rec}
		at, kind := c.i64(schema.ColTS), c.str(schema.ColKind)
		for r := 0; r < int(rec.NumRows()); r++ {
			if kind(r) == schema.EventGCStart {
				out = append(out, at(r))
			}
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read ebpf gc events: %w", err)
	}
	return out, nil
}

// ReadRaces calls each with every row of the races table (one access of
// a race report; none when the bundle has no such table); strings point
// into Arrow memory.
func ReadRaces(b *bundle.Bundle, mem memory.Allocator, each func(schema.Race)) error {
	err := bundle.Tolerate(b.ReadTable(schema.TableRaces, mem, func(rec arrow.Record) error {
		c := cols{rec: rec}
		num, access, addr := c.i64(schema.ColRace), c.str(schema.ColAccess), c.i64(schema.ColAddr)
		goid, stack, state := c.i64(schema.ColGoid), c.i64(schema.ColStackID), c.str(schema.ColGoroutineState)
		created, loc, source := c.i64(schema.ColCreationStackID), c.str(schema.ColLocation), c.str(schema.ColSource)
		for r := 0; r < int(rec.NumRows()); r++ {
			each(schema.Race{Race: num(r), Access: access(r), Addr: addr(r), Goid: goid(r), StackID: stack(r),
				GoroutineState: state(r), CreationStackID: created(r), Location: loc(r), Source: source(r)})
		}
		return nil
	}))
	if err != nil {
		return fmt.Errorf("read races: %w", err)
	}
	return nil
}
