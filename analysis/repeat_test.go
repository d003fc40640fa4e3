package analysis_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
)

// TestAnalysisRepeatable analyses one bundle with several suspects (two
// dumps of stuckprog's stuck goroutines and three of its two-bug mode)
// twelve times, at GOMAXPROCS 1, 2 and 8, and requires byte-identical
// JSON: no verdict, order or text may depend on map iteration order or
// scheduling.
func TestAnalysisRepeatable(t *testing.T) {
	r := startStuckProg(t, "stuck")
	d1 := stamped{"raw/dump-1.txt", r.dump(t), time.Now()}
	time.Sleep(time.Second)
	d2 := stamped{"raw/dump-2.txt", r.dump(t), time.Now()}
	inputs := map[string][]stamped{"stuck": {d1, d2}}
	for i := range 3 {
		name := fmt.Sprintf("dump-%d.txt", i+1)
		data, err := os.ReadFile("testdata/twobugs/" + name)
		if err != nil {
			t.Fatal(err)
		}
		inputs["twobugs"] = append(inputs["twobugs"], stamped{"raw/" + name, data, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 600 * time.Millisecond)})
	}
	for name, in := range inputs {
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		b := ingestInputs(t, mem, in...)
		var first []byte
		for i := range 12 {
			prev := runtime.GOMAXPROCS([]int{1, 2, 8}[i%3])
			rep, err := analysis.Analyze(b, mem, analysis.Options{})
			runtime.GOMAXPROCS(prev)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Suspects) < 2 {
				t.Fatalf("%s: %d suspects, want several", name, len(rep.Suspects))
			}
			got, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = got
				continue
			}
			if !bytes.Equal(got, first) {
				t.Fatalf("%s: analysis %d differs from the first:\n%s", name, i+1, firstDiff(first, got))
			}
		}
		mem.AssertSize(t, 0)
	}
}

// firstDiff shows where two texts first differ.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-300)
	return fmt.Sprintf("…%s\nthen\n…%s", a[lo:min(len(a), i+300)], b[lo:min(len(b), i+300)])
}
