package tables

import (
	"fmt"
	"maps"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// StackSeries maps a stack id to its values per snapshot time.
type StackSeries map[int64]map[int64][2]int64

func (s StackSeries) add(stack, ts, v0, v1 int64) {
	m := s[stack]
	if m == nil {
		m = map[int64][2]int64{}
		s[stack] = m
	}
	p := m[ts]
	m[ts] = [2]int64{p[0] + v0, p[1] + v1}
}

// ProfileData is what the analysis takes from the samples table.
type ProfileData struct {
	Heap      StackSeries // inuse_space, inuse_objects
	Goroutine StackSeries // count
	Leak      StackSeries // goroutineleak count
	HeapTS    []int64
	GorTS     []int64
	LeakTS    []int64
}

// ReadSamples reads the samples table: heap, goroutine and goroutineleak
// profile values per stack and snapshot time.
func ReadSamples(b *bundle.Bundle, mem memory.Allocator) (*ProfileData, error) {
	p := &ProfileData{Heap: StackSeries{}, Goroutine: StackSeries{}, Leak: StackSeries{}}
	heapTS, gorTS, leakTS := map[int64]bool{}, map[int64]bool{}, map[int64]bool{}
	err := b.ReadTable(schema.TableSamples, mem, func(rec arrow.Record) error {
		c := cols{rec: rec}
		ts, prof, stack := c.i64(schema.ColSnapshotTS), c.str(schema.ColProfile), c.i64(schema.ColStackID)
		space, objs, count := c.i64(schema.ColInuseSpace), c.i64(schema.ColInuseObjects), c.i64(schema.ColCount)
		for r := 0; r < int(rec.NumRows()); r++ {
			switch prof(r) {
			case schema.ProfileHeap:
				t := ts(r)
				heapTS[t] = true
				p.Heap.add(stack(r), t, space(r), objs(r))
			case schema.ProfileGoroutine:
				t := ts(r)
				gorTS[t] = true
				p.Goroutine.add(stack(r), t, count(r), 0)
			case schema.ProfileGoroutineLeak:
				t := ts(r)
				leakTS[t] = true
				p.Leak.add(stack(r), t, count(r), 0)
			}
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read samples: %w", err)
	}
	p.HeapTS, p.GorTS, p.LeakTS = slices.Sorted(maps.Keys(heapTS)), slices.Sorted(maps.Keys(gorTS)), slices.Sorted(maps.Keys(leakTS))
	return p, nil
}

// HeapPeriods maps each heap snapshot time to its profile's sampling
// period, from the manifest's artifacts.
func HeapPeriods(m bundle.Manifest) map[int64]int64 {
	out := map[int64]int64{}
	for _, a := range m.Artifacts {
		if a.Profile == schema.ProfileHeap && a.Period > 0 {
			out[a.Time.UnixNano()] = a.Period
		}
	}
	return out
}
