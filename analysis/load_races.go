package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis/internal/tables"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// readRaces reads the races table into reports, in source and report
// order.
func readRaces(b *bundle.Bundle, mem memory.Allocator, st *stackTable) ([]Race, error) {
	byKey := map[string]*Race{}
	var order []string
	err := bundle.Tolerate(b.ReadTable(schema.TableRaces, mem, func(rec arrow.Record) error {
		c := tables.Cols{Rec: rec}
		num, access, addr := c.I64(schema.ColRace), c.Str(schema.ColAccess), c.I64(schema.ColAddr)
		goid, stack, state := c.I64(schema.ColGoid), c.I64(schema.ColStackID), c.Str(schema.ColGoroutineState)
		created, loc, source := c.I64(schema.ColCreationStackID), c.Str(schema.ColLocation), c.Str(schema.ColSource)
		for r := 0; r < int(rec.NumRows()); r++ {
			key := fmt.Sprintf("%s\x00%d", source(r), num(r))
			race := byKey[key]
			if race == nil {
				race = &Race{Source: strings.Clone(source(r)), Number: int(num(r)), Location: strings.Clone(loc(r))}
				byKey[key] = race
				order = append(order, key)
			}
			a := RaceAccess{Access: strings.Clone(access(r)), Addr: fmt.Sprintf("%#x", uint64(addr(r))), Goid: goid(r),
				Stack: st.framesOf(stack(r)), State: strings.Clone(state(r))}
			if len(a.Stack) > 0 {
				f, _ := locationFrame(a.Stack)
				a.Function, a.File, a.Line = f.Function, f.File, f.Line
			}
			if cs := st.framesOf(created(r)); len(cs) > 0 {
				a.CreatedBy = &cs[0]
			}
			race.Accesses = append(race.Accesses, a)
		}
		return nil
	}))
	if err != nil {
		return nil, fmt.Errorf("read races: %w", err)
	}
	out := make([]Race, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Source != out[j].Source {
			return out[i].Source < out[j].Source
		}
		return out[i].Number < out[j].Number
	})
	return out, nil
}
