package analysis

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// maxGrowers bounds the growers a report lists.
const maxGrowers = 20

// heapSite is one allocation stack's trend across heap snapshots.
type heapSite struct {
	grower HeapGrower
	delta  float64
	funcs  []string
	conf   float64
	score  float64
}

// heapTrends fits every heap stack's inuse bytes across snapshots and
// returns the growing ones, largest growth first.
func heapTrends(p *profileData, st *stackTable) []*heapSite {
	ts := p.heapTS
	if len(ts) < 2 {
		return nil
	}
	idx := map[int64]int{}
	for i, t := range ts {
		idx[t] = i
	}
	var out []*heapSite
	bytes := make([]float64, len(ts))
	objs := make([]float64, len(ts))
	for stack, m := range p.heap {
		clear(bytes)
		clear(objs)
		for t, v := range m {
			bytes[idx[t]] = float64(v[0])
			objs[idx[t]] = float64(v[1])
		}
		delta := bytes[len(ts)-1] - bytes[0]
		if delta <= 0 {
			continue
		}
		f := fitSeries(ts, bytes)
		if f.Slope <= 0 {
			continue
		}
		fo := fitSeries(ts, objs)
		frames := st.framesOf(stack)
		funcs := functions(frames)
		if observerStack(funcs) {
			continue
		}
		loc, _ := locationFrame(frames)
		hs := &heapSite{delta: delta, funcs: funcs}
		if runtimeOnly(hs.funcs) && goroutineCreation(hs.funcs) {
			for _, f := range frames {
				if f.Function == "runtime.malg" || f.Function == "runtime.newproc1" {
					loc = f // goroutine structures, not an allocation of user code
					break
				}
			}
		}
		hs.grower = HeapGrower{
			StackID: stack, Location: loc.Function, File: loc.File, Line: loc.Line, Stack: frames,
			InuseBytes: int64(bytes[len(ts)-1]), InuseObjects: int64(objs[len(ts)-1]),
			BytesPerMin: round(f.Slope, 1), ObjectsPerMin: round(fo.Slope, 2), Fit: f,
		}
		for i, t := range ts {
			hs.grower.Series = append(hs.grower.Series, Point{TS: time.Unix(0, t).UTC(), Value: bytes[i]})
		}
		hs.conf, hs.score = heapScore(f, delta)
		out = append(out, hs)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].delta != out[j].delta {
			return out[i].delta > out[j].delta
		}
		return out[i].grower.StackID < out[j].grower.StackID
	})
	return out
}

// observerStack reports whether an allocation was made by the profiling
// endpoints a capture calls (net/http/pprof: trace buffers, profile
// encoding). Growth there is the capture's own footprint, not a leak of the
// service. Code that merely runs under pprof.Do or trace.WithRegion is the
// service's own and is kept.
func observerStack(funcs []string) bool {
	for _, f := range funcs {
		if strings.HasPrefix(f, "net/http/pprof.") {
			return true
		}
	}
	return false
}

// heapTotals sums inuse bytes per heap snapshot.
func heapTotals(p *profileData) []Point {
	sum := map[int64]float64{}
	for _, m := range p.heap {
		for t, v := range m {
			sum[t] += float64(v[0])
		}
	}
	out := make([]Point, 0, len(p.heapTS))
	for _, t := range p.heapTS {
		out = append(out, Point{TS: time.Unix(0, t).UTC(), Value: sum[t]})
	}
	return out
}

// diffHeap compares two heap snapshots by stack, largest growth first.
func diffHeap(p *profileData, st *stackTable, base, target int64, limit int) []HeapDiffEntry {
	var out []HeapDiffEntry
	for stack, m := range p.heap {
		a, b := m[base], m[target]
		if a == b {
			continue
		}
		loc, _ := locationFrame(st.framesOf(stack))
		out = append(out, HeapDiffEntry{StackID: stack, Location: loc.Function, BaseBytes: a[0], Bytes: b[0],
			DeltaBytes: b[0] - a[0], DeltaObjects: b[1] - a[1]})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].DeltaBytes != out[j].DeltaBytes {
			return out[i].DeltaBytes > out[j].DeltaBytes
		}
		return out[i].StackID < out[j].StackID
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	for i := range out {
		out[i].Stack = st.framesOf(out[i].StackID)
	}
	return out
}

// nearest returns the element of sorted ts closest to t.
func nearest(ts []int64, t int64) int64 {
	i := sort.Search(len(ts), func(i int) bool { return ts[i] >= t })
	switch {
	case i == 0:
		return ts[0]
	case i == len(ts):
		return ts[len(ts)-1]
	case t-ts[i-1] <= ts[i]-t:
		return ts[i-1]
	}
	return ts[i]
}

func heapDiff(b *bundle.Bundle, mem memory.Allocator, base, target time.Time) ([]HeapDiffEntry, error) {
	st, err := loadStacks(b, mem, nil)
	if err != nil {
		return nil, err
	}
	p, err := readSamples(b, mem)
	if err != nil {
		return nil, err
	}
	if len(p.heapTS) == 0 {
		return nil, fmt.Errorf("bundle %s has no heap profile", b.Dir)
	}
	bt, tt := p.heapTS[0], p.heapTS[len(p.heapTS)-1]
	if !base.IsZero() {
		bt = nearest(p.heapTS, base.UnixNano())
	}
	if !target.IsZero() {
		tt = nearest(p.heapTS, target.UnixNano())
	}
	return diffHeap(p, st, bt, tt, 0), nil
}
