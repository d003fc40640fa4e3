package tables

import (
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// ReadMetrics calls each with every row of the metrics table (none when
// the bundle has no such table); strings point into Arrow memory.
func ReadMetrics(b *bundle.Bundle, mem memory.Allocator, each func(schema.Metric)) error {
	return readRows(b, mem, schema.TableMetrics, "metrics", func(c cols, rows int) {
		ts, name, val, src := c.i64(schema.ColTS), c.str(schema.ColName), c.f64(schema.ColValue), c.str(schema.ColSource)
		for r := 0; r < rows; r++ {
			each(schema.Metric{TS: ts(r), Name: name(r), Value: val(r), Source: src(r)})
		}
	})
}

// ReadGCStarts returns the times of the GC cycles' starts the eBPF
// probes saw, in row order.
func ReadGCStarts(b *bundle.Bundle, mem memory.Allocator) ([]int64, error) {
	var out []int64
	err := readRows(b, mem, schema.TableEBPFEvents, "ebpf gc events", func(c cols, rows int) {
		at, kind := c.i64(schema.ColTS), c.str(schema.ColKind)
		for r := 0; r < rows; r++ {
			if kind(r) == schema.EventGCStart {
				out = append(out, at(r))
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadRaces calls each with every row of the races table (one access of
// a race report; none when the bundle has no such table); strings point
// into Arrow memory.
func ReadRaces(b *bundle.Bundle, mem memory.Allocator, each func(schema.Race)) error {
	return readRows(b, mem, schema.TableRaces, "races", func(c cols, rows int) {
		num, access, addr := c.i64(schema.ColRace), c.str(schema.ColAccess), c.i64(schema.ColAddr)
		goid, stack, state := c.i64(schema.ColGoid), c.i64(schema.ColStackID), c.str(schema.ColGoroutineState)
		created, loc, source := c.i64(schema.ColCreationStackID), c.str(schema.ColLocation), c.str(schema.ColSource)
		for r := 0; r < rows; r++ {
			each(schema.Race{Race: num(r), Access: access(r), Addr: addr(r), Goid: goid(r), StackID: stack(r),
				GoroutineState: state(r), CreationStackID: created(r), Location: loc(r), Source: source(r)})
		}
	})
}
