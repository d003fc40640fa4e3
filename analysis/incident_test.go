package analysis_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/report"
	"github.com/leakscope/leakscope/ingest/bundle"
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
	if testing.Short() {
		t.Skip("runs a client-go sample for 10 s")
	}
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	dir := record(t, filepath.Join(root, "kube", "informer-per-reconcile"), 10*time.Second, 2*time.Second, true)
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
			t.Errorf("goroutine suspect %s at %s is outside the incident (%s)", s.ID, s.Location, s.Incident)
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
	var md bytes.Buffer
	if err := report.Markdown(&md, rep, report.Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(md.String(), "\n")
	first := ""
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) != "" {
			first = l
			break
		}
	}
	if !strings.Contains(first, "main.(*controller).reconcile") || !strings.Contains(first, "factory.Start") {
		t.Errorf("first line of the report %q does not name the user's function and the fix", first)
	}
}
