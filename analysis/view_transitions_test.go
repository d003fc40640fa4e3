package analysis_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// TestTransitionSourceOfSuspect follows what a per-goroutine state view
// does: a suspect's member goids and their creators, through the
// TransitionSource the command injects (ingest.Transitions). The
// committed sample bundle predates trace_generations, so its changes come
// from its trace_transitions table.
func TestTransitionSourceOfSuspect(t *testing.T) {
	b, err := bundle.Open("../cmd/leakscope/bundles/operator-sim.lsb")
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rep, err := analysis.Analyze(b, mem, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var s *analysis.Suspect
	for i := range rep.Suspects {
		if rep.Suspects[i].Kind == "goroutine" && len(rep.Suspects[i].Goids) > 0 {
			s = &rep.Suspects[i]
			break
		}
	}
	if s == nil {
		t.Fatal("no goroutine suspect with member goids")
	}
	tree, err := analysis.Ancestry(b, mem)
	if err != nil {
		t.Fatal(err)
	}
	goids := slices.Clone(s.Goids)
	for _, g := range s.Goids {
		goids = append(goids, tree.Chain(g)...)
	}
	var src analysis.TransitionSource = ingest.Transitions
	trs, err := src(b, goids, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	frames := map[int64]string{}
	if err := b.Frames(mem, func(f schema.Frame) { frames[f.ID] = f.Function }); err != nil {
		t.Fatal(err)
	}
	stacks := map[int64][]string{}
	if err := b.Stacks(mem, func(st schema.Stack) {
		for _, id := range st.FrameIDs {
			stacks[st.ID] = append(stacks[st.ID], frames[id])
		}
	}); err != nil {
		t.Fatal(err)
	}
	fn := s.Location[strings.LastIndexByte(s.Location, '.')+1:]
	var parked int
	for _, tr := range trs {
		if !slices.Contains(goids, tr.Goid) {
			t.Fatalf("transition of goroutine %d, not asked for", tr.Goid)
		}
		if tr.To == "waiting" && tr.Reason != "" && slices.ContainsFunc(stacks[tr.StackID], func(f string) bool { return strings.HasSuffix(f, fn) }) {
			parked++
		}
	}
	if parked == 0 {
		t.Errorf("no member of %s (%s at %s) blocks there in %d transitions", s.ID, s.Pattern, s.Location, len(trs))
	}
}
