package analysis_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/samples"
)

// TestCommittedSampleBundles analyses the sample bundles recorded from the
// sample programs (samples/bundles, with pprof, traces and eBPF) and checks
// them against each program's declared leaks: every planted leak in the top
// ranks, no other suspect, and none blamed on the profiler's own
// allocations.
func TestCommittedSampleBundles(t *testing.T) {
	dirs, err := filepath.Glob("../samples/bundles/*.lsb")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no sample bundles found (%v)", err)
	}
	for _, dir := range dirs {
		name := strings.TrimSuffix(filepath.Base(dir), ".lsb")
		t.Run(name, func(t *testing.T) {
			truth, err := samples.Load(filepath.Join("..", "samples", name))
			if err != nil {
				t.Fatal(err)
			}
			b, err := bundle.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			rep, err := analysis.Analyze(b, mem, analysis.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r := evaluate(name, truth, rep)
			if r.found != r.leaks || r.fp != 0 {
				t.Errorf("found %d of %d planted leaks (missed %v), %d false suspects %v", r.found, r.leaks, r.missed, r.fp, r.extra)
			}
			for _, s := range rep.Suspects {
				if strings.HasPrefix(s.Location, "net/http/pprof.") || strings.HasPrefix(s.Location, "runtime/trace.") {
					t.Errorf("suspect %s blames the profiler itself: %s", s.ID, s.Location)
				}
			}
		})
	}
}
