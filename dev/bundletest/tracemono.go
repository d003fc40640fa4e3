package bundletest

import (
	"sort"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// TraceMono returns a function giving CLOCK_MONOTONIC of a wall time of
// the bundle's trace windows, as trace ingest mapped it: wall time less
// the wall offset plus the monotonic offset of the generation
// (trace_generations) whose range holds it, else of the last generation
// that starts before it. Adjacent generations' wall ranges can overlap by
// the drift between their clock snapshots; a time in both could belong to
// either, and slack is then how far the two mappings differ. ok is false
// before every generation.
func TraceMono(t testing.TB, b *bundle.Bundle, mem memory.Allocator) func(wall int64) (mono, slack int64, ok bool) {
	t.Helper()
	type gen struct{ start, end, wallOff, monoOff int64 }
	var gens []gen
	err := b.ReadTable(schema.TableTraceGenerations, mem, func(rec arrow.Record) error {
		col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
		start, end := col(schema.ColStartTS).(*array.Timestamp), col(schema.ColEndTS).(*array.Timestamp)
		wallOff, monoOff := col(schema.ColWallOffsetNS).(*array.Int64), col(schema.ColMonoOffsetNS).(*array.Int64)
		for i := 0; i < int(rec.NumRows()); i++ {
			gens = append(gens, gen{int64(start.Value(i)), int64(end.Value(i)), wallOff.Value(i), monoOff.Value(i)})
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read %s: %v", schema.TableTraceGenerations, err)
	}
	sort.Slice(gens, func(i, j int) bool { return gens[i].start < gens[j].start })
	return func(wall int64) (int64, int64, bool) {
		i := sort.Search(len(gens), func(i int) bool { return gens[i].start > wall }) - 1
		if i < 0 {
			return 0, 0, false
		}
		g := gens[i]
		mono := wall - g.wallOff + g.monoOff
		var slack int64
		for j := i - 1; j >= 0 && gens[j].end >= wall; j-- {
			other := wall - gens[j].wallOff + gens[j].monoOff
			slack = max(slack, abs(other-mono))
		}
		return mono, slack, true
	}
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
