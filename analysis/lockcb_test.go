package analysis_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/samples"
)

// TestLockHeldAcrossLibraryCallback records a cache whose get holds a
// mutex across singleflight.Group.Do while the callback blocks on a
// send, and checks the report's first line names the user's function
// whose lock the goroutines queue on (main.(*cache).get), and never
// main.main.
func TestLockHeldAcrossLibraryCallback(t *testing.T) {
	liveTest(t, "runs a sample for 8 s")
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	rep := analyzeRecording(t, record(t, filepath.Join(root, "libs", "singleflight-lock-held"), 8*time.Second, 2*time.Second, true, "-rate", "20"))
	for _, inc := range rep.Incidents {
		t.Logf("%s: %s (%s) origin %+v; fix %s; members %v", inc.ID, inc.Summary, inc.Pattern, inc.Origin, inc.Fix, inc.Suspects)
	}
	for _, s := range rep.Suspects {
		t.Logf("suspect %s %s %s@%s: %d, %+.1f/min, %s origin %+v", s.ID, s.Kind, s.Pattern, s.Location, s.Count, s.GrowthPerMin, s.Incident, s.Origin)
	}
	first := firstLine(t, rep)
	t.Log(first)
	if !strings.Contains(first, "main.(*cache).get") {
		t.Errorf("first line %q does not name main.(*cache).get", first)
	}
	if strings.Contains(first, "`main.main`") {
		t.Errorf("first line %q names main.main", first)
	}
}
