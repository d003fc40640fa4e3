package analysis_test

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/google/pprof/profile"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/profiles"
)

// Input shapes whose analysis cost is measured against their size:
// each benchmark runs its shape at several sizes and reports CPU, wall
// (ns/op) and peak heap per analysis, so that a pass growing faster than
// n log n shows as a ratio far above the size's.

// growingStacksSizes are the sizes BenchmarkAnalyzeGrowingStacks runs.
var growingStacksSizes = []int{1_000, 5_000, 20_000}

// BenchmarkAnalyzeGrowingStacks analyses N distinct stacks whose
// goroutine counts and heap bytes both grow, in four goroutine and four
// heap profiles (no dump), for several N: every stack is a suspect of its
// own.
func BenchmarkAnalyzeGrowingStacks(b *testing.B) {
	for _, n := range growingStacksSizes {
		b.Run(fmt.Sprintf("stacks=%d", n), func(b *testing.B) {
			dir := growingStacksBundle(b, n)
			benchAnalyze(b, dir, func(rep *analysis.Report) error {
				if len(rep.Suspects) < n {
					return fmt.Errorf("%d suspects, want at least %d", len(rep.Suspects), n)
				}
				return nil
			})
		})
	}
}

// benchAnalyze analyses the bundle at dir b.N times and reports the
// CPU seconds and peak Go heap of one analysis beside the wall time.
func benchAnalyze(b *testing.B, dir string, check func(*analysis.Report) error) {
	bd, err := bundle.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	var peak uint64
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		runtime.GC()
		b.StartTimer()
		c0 := cpuTime()
		stop := watchHeap(&peak)
		rep, err := analysis.Analyze(bd, memory.DefaultAllocator, analysis.Options{})
		stop()
		cpu += cpuTime() - c0
		if err == nil {
			err = check(rep)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

// growingStacksBundle writes (once per process and size) the bundle of
// BenchmarkAnalyzeGrowingStacks: profiles as the runtime writes them,
// ingested as `leakscope ingest` does.
func growingStacksBundle(tb testing.TB, n int) string {
	bb, ok := growingBundles[n]
	if !ok {
		bb = &benchBundle{name: fmt.Sprintf("growing-%d.lsb", n), write: func(dir string) error { return writeGrowingStacks(dir, n) }}
		growingBundles[n] = bb
	}
	return bb.path(tb)
}

var growingBundles = map[int]*benchBundle{}

func writeGrowingStacks(dir string, n int) error {
	m := bundle.NewManifest("bench", "test")
	m.Start, m.End = t0, t0.Add(15*time.Minute)
	w, err := bundle.Create(dir, m, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	for s := 0; s < 4; s++ {
		for _, heap := range []bool{false, true} {
			var buf bytes.Buffer
			if err := growingStacksProfile(n, s, heap).Write(&buf); err != nil {
				return err
			}
			at := t0.Add(time.Duration(s) * 5 * time.Minute)
			a := bundle.Artifact{Name: fmt.Sprintf("p%d-%v.pb.gz", s, heap), Time: at, Size: int64(buf.Len())}
			if err := profiles.Ingest(w, &buf, &a); err != nil {
				return err
			}
			w.Update(func(m *bundle.Manifest) {
				m.Source(bundle.SourcePprof)
				m.Artifacts = append(m.Artifacts, a)
			})
		}
	}
	return w.Close()
}

// growingStacksProfile is snapshot s of the shape: goroutine profile
// (goroutines parked in a receive, 2(s+1) per stack) or heap profile
// ((s+1) MiB in use per stack).
func growingStacksProfile(n, s int, heap bool) *profile.Profile {
	p := &profile.Profile{TimeNanos: t0.Add(time.Duration(s) * 5 * time.Minute).UnixNano(), Period: 1}
	p.SampleType = []*profile.ValueType{{Type: "goroutine", Unit: "count"}}
	p.PeriodType = &profile.ValueType{Type: "goroutine", Unit: "count"}
	if heap {
		p.SampleType = []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}}
		p.PeriodType, p.Period = &profile.ValueType{Type: "space", Unit: "bytes"}, 512*1024
	}
	m := &profile.Mapping{ID: 1, Start: 0x400000, Limit: 0x9000000, File: "/bin/svc"}
	p.Mapping = []*profile.Mapping{m}
	loc := func(name, file string, line int) *profile.Location {
		id := uint64(len(p.Location) + 1)
		fn := &profile.Function{ID: id, Name: name, Filename: file}
		l := &profile.Location{ID: id, Mapping: m, Address: 0x400000 + id*16, Line: []profile.Line{{Function: fn, Line: int64(line)}}}
		p.Function, p.Location = append(p.Function, fn), append(p.Location, l)
		return l
	}
	var park []*profile.Location
	if !heap {
		park = []*profile.Location{loc("runtime.gopark", "/usr/local/go/src/runtime/proc.go", 425),
			loc("runtime.chanrecv", "/usr/local/go/src/runtime/chan.go", 600), loc("runtime.chanrecv1", "/usr/local/go/src/runtime/chan.go", 500)}
	}
	for i := 0; i < n; i++ {
		pkg := fmt.Sprintf("example.com/svc/pkg%d", i%50)
		locs := append(append([]*profile.Location{}, park...),
			loc(fmt.Sprintf("%s.leak%d", pkg, i), "/src/"+pkg+"/f.go", 10+i), loc(fmt.Sprintf("%s.start%d", pkg, i), "/src/"+pkg+"/g.go", 20+i))
		v := []int64{int64(2 * (s + 1))}
		if heap {
			by := int64(s+1) << 20
			v = []int64{by / 64, by, by / 64, by}
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: v})
	}
	return p
}
