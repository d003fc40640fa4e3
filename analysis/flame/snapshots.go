package flame

import (
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// Profiles returns, for every profile in the samples table, its snapshot
// times (Unix ns, ascending). A table cut short is listed up to its last
// complete batch.
func Profiles(b *bundle.Bundle, mem memory.Allocator) (map[string][]int64, error) {
	seen := map[string]map[int64]struct{}{}
	err := b.ReadTable(schema.TableSamples, mem, func(rec arrow.Record) error {
		pc, err := column(rec, schema.TableSamples, schema.ColProfile)
		if err != nil {
			return err
		}
		_, tss, err := int64Column(rec, schema.TableSamples, schema.ColSnapshotTS)
		if err != nil {
			return err
		}
		if _, ok := pc.(*array.Dictionary); !ok {
			if _, ok := pc.(*array.String); !ok {
				return fmt.Errorf("samples: profile column has type %s, want string", pc.DataType())
			}
		}
		names := bundle.NewStrings(pc)
		lastName, lastTS := "", int64(-1)
		for i, ts := range tss {
			name := names.Value(i)
			if name == lastName && ts == lastTS {
				continue
			}
			lastName, lastTS = name, ts
			m := seen[name]
			if m == nil {
				m = map[int64]struct{}{}
				seen[name] = m
			}
			m[ts] = struct{}{}
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("list snapshots of %s: %w", b.Dir, err)
	}
	return sortedSets(seen), nil
}

// DumpSnapshots returns the snapshot times (Unix ns, ascending) of the
// goroutine dumps in the goroutines table.
func DumpSnapshots(b *bundle.Bundle, mem memory.Allocator) ([]int64, error) {
	seen := map[string]map[int64]struct{}{"": {}}
	err := b.ReadTable(schema.TableGoroutines, mem, func(rec arrow.Record) error {
		_, tss, err := int64Column(rec, schema.TableGoroutines, schema.ColSnapshotTS)
		if err != nil {
			return err
		}
		last := int64(-1)
		for _, ts := range tss {
			if ts != last {
				seen[""][ts] = struct{}{}
				last = ts
			}
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("list dump snapshots of %s: %w", b.Dir, err)
	}
	return sortedSets(seen)[""], nil
}

func sortedSets(seen map[string]map[int64]struct{}) map[string][]int64 {
	out := make(map[string][]int64, len(seen))
	for name, m := range seen {
		ts := make([]int64, 0, len(m))
		for t := range m {
			ts = append(ts, t)
		}
		slices.Sort(ts)
		out[name] = ts
	}
	return out
}
