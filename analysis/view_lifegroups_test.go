package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/internal/format"
)

// TestLifetimeGroups: on a real capture every timeline group has a name
// (goroutines seen without a stack are named by where they were created),
// counts add up to the bars, and verdicts follow the suspects' members.
func TestLifetimeGroups(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b, err := bundle.Open("../cmd/leakscope/bundles/operator-sim.lsb")
	if err != nil {
		t.Fatal(err)
	}
	lv, err := Lifetimes(b, mem, time.Time{}, time.Time{}, 100000)
	if err != nil {
		t.Fatal(err)
	}
	total, createdIn := 0, 0
	for i, g := range lv.Groups {
		total += g.Count
		if g.Label == "" || g.Label == "?" || strings.HasSuffix(g.Label, " ") {
			t.Errorf("group %d (%s %q) has no name: %q", i, g.Kind, g.Name, g.Label)
		}
		if g.CreatedIn != "" {
			createdIn += g.Count
			if !strings.Contains(g.Label, "created in "+g.CreatedIn) {
				t.Errorf("group %q does not say where it was created", g.Label)
			}
		}
		if i > 0 && lv.Groups[i-1].Kind == g.Kind && lv.Groups[i-1].Count < g.Count {
			t.Errorf("group %q (%d) after a smaller one", g.Label, g.Count)
		}
	}
	if total != len(lv.Bars) || len(lv.Bars) == 0 {
		t.Fatalf("groups hold %d bars of %d", total, len(lv.Bars))
	}
	if createdIn == 0 {
		t.Errorf("no goroutine seen only by eBPF is named by its creator (the sample has hundreds)")
	}
	for _, bar := range lv.Bars {
		if g := lv.Groups[bar.Group]; g.Kind != bar.Kind || g.Name != bar.Name {
			t.Fatalf("bar %s in group %+v", bar.ID, g)
		}
		if bar.Kind == "goroutine" && bar.Verdict != VerdictHealthy && bar.Verdict != VerdictEnded {
			t.Fatalf("bar %s verdict %q without suspects", bar.ID, bar.Verdict)
		}
	}
	checkMarkedSuspects(t, b, mem, lv)
}

// checkMarkedSuspects marks a view's bars with the suspects' members and
// checks that every member in view is drawn as a suspect and counted in
// its group, whose summary says so.
func checkMarkedSuspects(t *testing.T, b *bundle.Bundle, mem memory.Allocator, lv *LifetimeView) {
	t.Helper()
	rep, err := Analyze(b, mem, Options{})
	if err != nil {
		t.Fatal(err)
	}
	members := map[string][]int64{}
	want := 0
	for _, s := range rep.Suspects {
		if s.Kind == KindGoroutine {
			members[s.ID] = s.Goids
		}
	}
	inView := map[int64]bool{}
	for _, bar := range lv.Bars {
		inView[bar.Goid] = true
	}
	for _, gs := range members {
		for _, g := range gs {
			if inView[g] {
				want++
			}
		}
	}
	lv.MarkVerdicts(members)
	got, grouped := 0, 0
	for _, bar := range lv.Bars {
		if bar.Verdict == VerdictSuspect {
			got++
			if bar.Suspect == "" {
				t.Errorf("suspect bar %s names no suspect", bar.ID)
			}
		}
	}
	for _, g := range lv.Groups {
		grouped += g.Members
		if g.Kind == "goroutine" && (!strings.HasPrefix(g.Summary, format.Count(float64(g.Count), "goroutine")+",") || g.Members > 0 && !strings.Contains(g.Summary, " in "+g.Suspects[0])) {
			t.Errorf("group %q summary %q", g.Label, g.Summary)
		}
	}
	if got != want || grouped != want || want == 0 {
		t.Errorf("%d suspect bars, %d counted in groups, want %d", got, grouped, want)
	}
}
