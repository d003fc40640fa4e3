package analysis

import (
	"fmt"
	"maps"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// stackSeries maps a stack id to its values per snapshot time.
type stackSeries map[int64]map[int64][2]int64

func (s stackSeries) add(stack, ts, v0, v1 int64) {
	m := s[stack]
	if m == nil {
		m = map[int64][2]int64{}
		s[stack] = m
	}
	p := m[ts]
	m[ts] = [2]int64{p[0] + v0, p[1] + v1}
}

// profileData is what the analysis takes from the samples table.
type profileData struct {
	heap      stackSeries // inuse_space, inuse_objects
	goroutine stackSeries // count
	leak      stackSeries // goroutineleak count
	heapTS    []int64
	gorTS     []int64
	leakTS    []int64
}

func readSamples(b *bundle.Bundle, mem memory.Allocator) (*profileData, error) {
	p := &profileData{heap: stackSeries{}, goroutine: stackSeries{}, leak: stackSeries{}}
	heapTS, gorTS, leakTS := map[int64]bool{}, map[int64]bool{}, map[int64]bool{}
	err := b.ReadTable(schema.TableSamples, mem, func(rec arrow.Record) error {
		c := cols{rec}
		ts, prof, stack := c.i64(schema.ColSnapshotTS), c.str(schema.ColProfile), c.i64(schema.ColStackID)
		space, objs, count := c.i64(schema.ColInuseSpace), c.i64(schema.ColInuseObjects), c.i64(schema.ColCount)
		for r := 0; r < int(rec.NumRows()); r++ {
			switch prof(r) {
			case schema.ProfileHeap:
				t := ts(r)
				heapTS[t] = true
				p.heap.add(stack(r), t, space(r), objs(r))
			case schema.ProfileGoroutine:
				t := ts(r)
				gorTS[t] = true
				p.goroutine.add(stack(r), t, count(r), 0)
			case schema.ProfileGoroutineLeak:
				t := ts(r)
				leakTS[t] = true
				p.leak.add(stack(r), t, count(r), 0)
			}
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read samples: %w", err)
	}
	p.heapTS, p.gorTS, p.leakTS = slices.Sorted(maps.Keys(heapTS)), slices.Sorted(maps.Keys(gorTS)), slices.Sorted(maps.Keys(leakTS))
	return p, nil
}
