package analysis_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/samples"
)

// TestOneVerdict captures one growing leak (a goroutine per order
// blocked on a send nobody receives) three ways: six dumps over 10 s
// with a trace window, three dumps, two dumps. Every capture must give
// the same top incident (pattern, origin) and the same verdict on its
// group, "leaking" (docs/DESIGN.md, "One verdict"), and its line must
// say the goroutines leak.
func TestOneVerdict(t *testing.T) {
	liveTest(t, "runs a sample three times, for 10 s at most")
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "events-never-read")
	shapes := []struct {
		name  string
		d     time.Duration
		trace bool
	}{{"six dumps and a trace", 10 * time.Second, true}, {"three dumps", 4 * time.Second, false}, {"two dumps", 2 * time.Second, false}}
	reps := make([]*analysis.Report, len(shapes))
	var wg sync.WaitGroup
	for i, sh := range shapes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i] = analyzeRecording(t, record(t, dir, sh.d, 2*time.Second, sh.trace, "-rate", "20"))
		}()
	}
	wg.Wait()
	var want string
	for i, rep := range reps {
		if rep == nil || len(rep.Incidents) == 0 {
			t.Fatalf("%s: no incident", shapes[i].name)
		}
		got, line := verdictKey(rep)
		t.Logf("%s: %s — %s", shapes[i].name, got, line)
		if !strings.Contains(line, " leak") {
			t.Errorf("%s: the incident's line %q does not say the goroutines leak", shapes[i].name, line)
		}
		if want == "" {
			want = got
		} else if got != want {
			t.Errorf("%s says %s; %s said %s", shapes[i].name, got, shapes[0].name, want)
		}
	}
	if !strings.HasSuffix(want, "verdict leaking") {
		t.Errorf("verdict %s, want leaking", want)
	}
}

// verdictKey is what every capture of one leak must say alike: the top
// incident's pattern and origin and the verdict on its top member.
func verdictKey(rep *analysis.Report) (string, string) {
	inc := rep.Incidents[0]
	origin := "none"
	if inc.Origin != nil {
		origin = inc.Origin.Function
	}
	verdict := ""
	for _, s := range rep.Suspects {
		if s.ID == inc.Suspects[0] {
			verdict = s.Verdict
		}
	}
	return fmt.Sprintf("%s from %s, verdict %s", inc.Pattern, origin, verdict), inc.Summary
}
