package analysis_test

import (
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/leakscope/leakscope/analysis"
)

// TestMixedSiteParts checks that a group parked at one line with one
// creator function, whose members the program shows partly stuck (their
// Cond has no signaller) and partly wakeable (a sleeping signaller holds
// theirs), is reported as two: the stuck members as a suspect counting
// only them, as its selection shows, and the rest as a look-alike.
func TestMixedSiteParts(t *testing.T) {
	const loc, pairs = "main.pair.func1", 3
	r := startProg(t, instancesProg.build(t))
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b := ingestInputs(t, mem, stamped{"raw/dump-1.txt", r.dump(t), time.Now()})
	rep, err := analysis.Analyze(b, mem, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var stuck []analysis.Suspect
	for _, s := range rep.Suspects {
		if s.Location == loc {
			stuck = append(stuck, s)
		}
	}
	if len(stuck) != 1 || stuck[0].Count != pairs {
		t.Fatalf("suspects at %s: %+v, want one of %d goroutines", loc, stuck, pairs)
	}
	sel, err := rep.Select(b, mem, stuck[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Goids) != pairs || !slices.Equal(sel.Goids, stuck[0].Goids) {
		t.Errorf("the suspect's selection %v, its goids %v: want the same %d", sel.Goids, stuck[0].Goids, pairs)
	}
	found := false
	for _, l := range rep.LookAlikes {
		if l.Location == loc {
			found = true
			if l.Count != pairs || l.Kind != "wakeable" {
				t.Errorf("look-alike at %s: %d goroutines, %s (%s); want %d wakeable", loc, l.Count, l.Kind, l.Reason, pairs)
			}
		}
	}
	if !found {
		t.Errorf("no look-alike at %s for the members a sleeping signaller can wake", loc)
	}
}
