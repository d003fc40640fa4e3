package analysis_test

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/report"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/dump"
	"github.com/leakscope/leakscope/samples"
)

// TestInformerPerReconcileIncident records the client-go sample whose
// reconcile starts an informer factory per call (real informers, fake
// clientset) with dumps, heap profiles and a trace window, and checks the
// root cause: one incident whose origin is main.(*controller).reconcile,
// with the informer's goroutine groups as members, the heap they pin
// attached, the library fix in the user's terms, and the report's first
// line naming the function and the fix.
func TestInformerPerReconcileIncident(t *testing.T) {
	liveTest(t, "runs a client-go sample for 10 s")
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	// Twice the sample's default rate: each informer holds ~20 KiB, and at
	// 10 calls/s the heap profiles' default sampling (one sample per 512
	// KiB) saw too few samples in one recording of six beside CPU hogs.
	// Beside CPU hogs the sample starts fewer informers in 10 s, and the
	// goroutines of those it started may not all have reached where they
	// park: scraping goes on (up to 60 s) until the dumps show the
	// informer's goroutine groups growing and its own live heap risen by
	// 4 MiB (eight of the default heap samples' 512 KiB).
	ready := func(p progress) bool { return grownGroups(t, p.dumps, 20) >= 8 && p.heapRise >= 4<<20 }
	rep := analyzeRecording(t, recordUntil(t, filepath.Join(root, "kube", "informer-per-reconcile"), 10*time.Second, 60*time.Second, 2*time.Second, true, ready, "-rate", "20"))
	if len(rep.Incidents) == 0 {
		t.Fatalf("no incident; suspects %d", len(rep.Suspects))
	}
	inc := rep.Incidents[0]
	t.Logf("%s: %s; members %v", inc.ID, inc.Summary, inc.Suspects)
	if inc.Origin == nil || inc.Origin.Function != "main.(*controller).reconcile" || inc.Pattern != "client-go-informer-not-stopped" {
		t.Fatalf("top incident %+v, want the informer leak from main.(*controller).reconcile", inc)
	}
	if len(inc.Suspects) < 5 {
		t.Errorf("incident has %d members %v, want the informer's goroutine groups in one incident", len(inc.Suspects), inc.Suspects)
	}
	for _, s := range rep.Suspects {
		if s.Kind == analysis.KindGoroutine && s.Incident != inc.ID {
			t.Errorf("goroutine suspect %s at %s is outside the incident (%s): %s %s %.1f %v", s.ID, s.Location, s.Incident, s.Verdict, s.Pattern, s.Score, s.Evidence)
		}
	}
	if inc.PerCall < 5 || inc.CallsPerMin <= 0 {
		t.Errorf("%.1f goroutines per call at %.1f calls/min", inc.PerCall, inc.CallsPerMin)
	}
	if inc.RetainedBytes <= 0 {
		t.Errorf("no heap attached to the incident")
	}
	if !strings.Contains(inc.Fix, "close the stop channel passed to factory.Start") || !strings.Contains(inc.Fix, "`main.(*controller).reconcile`") {
		t.Errorf("fix %q is not in the user's terms", inc.Fix)
	}
	first := firstLine(t, rep)
	if !strings.Contains(first, "main.(*controller).reconcile") || !strings.Contains(first, "factory.Start") {
		t.Errorf("first line of the report %q does not name the user's function and the fix", first)
	}
}

// grownGroups counts the goroutine groups (goroutines with the same
// stack, by function) that hold at least by more goroutines in the last
// of dumps than in the first.
func grownGroups(t *testing.T, dumps [][]byte, by int) int {
	if len(dumps) < 2 {
		return 0
	}
	first, last := stackCounts(t, dumps[0]), stackCounts(t, dumps[len(dumps)-1])
	n := 0
	for k, c := range last {
		if c-first[k] >= by {
			n++
		}
	}
	return n
}

// stackCounts parses a debug=2 dump and counts its goroutines per stack.
func stackCounts(t *testing.T, text []byte) map[string]int {
	counts := map[string]int{}
	rd := dump.NewReader(bytes.NewReader(text))
	for {
		g, err := rd.Next()
		if err == io.EOF {
			return counts
		}
		if err != nil {
			t.Fatalf("parse a scraped dump: %v", err)
		}
		var key strings.Builder
		for _, f := range g.Frames {
			key.WriteString(f.Function)
			key.WriteByte('\n')
		}
		counts[key.String()]++
	}
}

// TestLibraryRuleIncidents records real programs that plant one
// library's leaking shape each: those of samples/libs (an HTTP response
// body never closed, an errgroup whose members block after an early
// return, a gRPC ClientConn per call never closed, a gRPC client stream
// never cancelled, a context's cancel dropped) and the controller-runtime
// one of samples/kube (a watch added on every reconcile, run by
// controller-runtime's own workers), with dumps, heap profiles and a
// trace window, and checks that the report's top incident names the
// user's frame from the sample's truth, the library rule's pattern and
// its fix in the user's terms, with the report's first line naming both.
func TestLibraryRuleIncidents(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six library samples for 10 s each")
	}
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		module, name string
		rate         string
		groups       int // member suspects the incident holds at least
	}{
		{"libs", "http-body-not-closed", "40", 2},           // readLoop, writeLoop
		{"libs", "errgroup-early-return", "20", 2},          // blocked members, the waiter
		{"libs", "grpc-conn-per-call", "20", 3},             // serializers, reader, loopy writer
		{"libs", "grpc-stream-not-cancelled", "20", 1},      // the stream's context waiter
		{"libs", "context-cancel-dropped", "4000", 1},       // the timerCtx allocations
		{"kube", "controller-watch-per-reconcile", "20", 2}, // sync loop, event handler
	}
	sem := make(chan struct{}, 3)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			dir := filepath.Join(root, c.module, c.name)
			truth, err := samples.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			leak := truth.Leaks[0]
			// Beside CPU hogs a heap leak's sample gets fewer calls done
			// in 10 s, and its rise may not clear the heap profiles'
			// sampling floor: scraping goes on (up to 60 s) until the
			// sample's own live heap rose by 5 MiB (about 8 s of its
			// calls on a quiet machine).
			var ready func(progress) bool
			if leak.Kind == samples.KindHeap {
				ready = func(p progress) bool { return p.heapRise >= 5<<20 }
			}
			rep := analyzeRecording(t, recordUntil(t, dir, 10*time.Second, 60*time.Second, 2*time.Second, true, ready, "-rate", c.rate))
			if len(rep.Incidents) == 0 {
				t.Fatalf("no incident; suspects %d", len(rep.Suspects))
			}
			inc := rep.Incidents[0]
			t.Logf("%s: %s; members %v; fix %s", inc.ID, inc.Summary, inc.Suspects, inc.Fix)
			for _, other := range rep.Incidents[1:] {
				t.Logf("also %s: %s (%s); members %v", other.ID, other.Summary, other.Pattern, other.Suspects)
			}
			for _, s := range rep.Suspects {
				t.Logf("suspect %s %s %s@%s: %d, %+.1f/min, score %.0f, %s", s.ID, s.Kind, s.Pattern, s.Location, s.Count, s.GrowthPerMin, s.Score, s.Incident)
			}
			if inc.Origin == nil || inc.Origin.Function != leak.Origin || inc.Pattern != leak.Pattern {
				t.Fatalf("top incident: origin %+v, pattern %s; want origin %s, pattern %s", inc.Origin, inc.Pattern, leak.Origin, leak.Pattern)
			}
			if len(inc.Suspects) < c.groups {
				t.Errorf("incident has %d members %v, want at least %d", len(inc.Suspects), inc.Suspects, c.groups)
			}
			user := "`" + leak.Origin + "`"
			if !strings.Contains(inc.Fix, leak.Fix) || !strings.Contains(inc.Fix, user) {
				t.Errorf("fix %q does not say %q in the user's terms (%s)", inc.Fix, leak.Fix, user)
			}
			if first := firstLine(t, rep); !strings.Contains(first, leak.Origin) || !strings.Contains(first, leak.Fix) {
				t.Errorf("first line of the report %q does not name %s and the fix", first, leak.Origin)
			}
		})
	}
}

// analyzeRecording analyses a recorded bundle with the default options.
func analyzeRecording(t *testing.T, dir string) *analysis.Report {
	t.Helper()
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
	return rep
}

// firstLine is the first line of the Markdown report after its title.
func firstLine(t *testing.T, rep *analysis.Report) string {
	t.Helper()
	var md bytes.Buffer
	if err := report.Markdown(&md, rep, report.Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(md.String(), "\n")
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	return ""
}
