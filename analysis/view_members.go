package analysis

import (
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// Selection says which rows of the bundle one suspect's figures count,
// so that a view of the suspect (its flame graph, its goroutines in the
// ancestry tree or the timeline) counts exactly the same thing at the
// same time: at Snapshot, the goroutines Goids (a goroutine suspect from
// dumps) or the samples of Profile on Stacks (a heap suspect, or a
// goroutine suspect from goroutine profiles).
type Selection struct {
	ID       string
	Snapshot time.Time
	Goids    []int64
	Profile  string
	Stacks   []int64
}

// Has reports whether goroutine goid is a member of the selection (a
// goroutine suspect from dumps: Goids is sorted).
func (s Selection) Has(goid int64) bool {
	_, ok := slices.BinarySearch(s.Goids, goid)
	return ok
}

// Page returns up to limit member goids from offset on, in goid order,
// and the offset of the next page (0 at the end).
func (s Selection) Page(offset, limit int) (goids []int64, next int) {
	if offset >= len(s.Goids) || limit <= 0 {
		return []int64{}, 0
	}
	end := min(len(s.Goids), offset+limit)
	if end < len(s.Goids) {
		next = end
	}
	return slices.Clone(s.Goids[offset:end]), next
}

// Select returns the selection of suspect id: for a goroutine suspect from
// dumps it reads the goroutines table at the suspect's CountAt and keeps
// the members of the groups the suspect was built from, so len(Goids) is
// its Count; Goids are sorted, so [Selection.Has] answers membership.
func (r *Report) Select(b *bundle.Bundle, mem memory.Allocator, id string) (Selection, error) {
	for _, s := range r.Suspects {
		if s.ID != id {
			continue
		}
		sel := Selection{ID: id, Snapshot: s.CountAt}
		switch {
		case s.Kind == KindHeap:
			sel.Profile, sel.Stacks = schema.ProfileHeap, s.StackIDs
		case len(s.keys) > 0:
			goids, err := members(b, mem, s)
			if err != nil {
				return sel, err
			}
			slices.Sort(goids)
			sel.Goids = slices.Compact(goids)
		case len(s.StackIDs) > 0:
			sel.Profile, sel.Stacks = schema.ProfileGoroutine, s.StackIDs
		default:
			return sel, fmt.Errorf("suspect %s has no snapshot to select from (it comes from trace windows only)", id)
		}
		return sel, nil
	}
	return Selection{}, fmt.Errorf("no suspect %q", id)
}

// members reads the goids of a goroutine suspect's groups at its CountAt.
func members(b *bundle.Bundle, mem memory.Allocator, s Suspect) ([]int64, error) {
	want := map[groupKey]bool{}
	for _, k := range s.keys {
		want[k] = true
	}
	at := s.CountAt.UnixNano()
	var out []int64
	err := b.ReadTable(schema.TableGoroutines, mem, func(rec arrow.Record) error {
		c := cols{rec}
		ts, goid, state, stack, creator := c.i64(schema.ColSnapshotTS), c.i64(schema.ColGoid), c.str(schema.ColState), c.i64(schema.ColStackID), c.str(schema.ColCreatorFunction)
		for r := 0; r < int(rec.NumRows()); r++ {
			if ts(r) != at {
				continue
			}
			if want[groupKey{state: normState(state(r)), stackID: stack(r), creator: creator(r)}] {
				out = append(out, goid(r))
			}
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read goroutines: %w", err)
	}
	return out, nil
}
