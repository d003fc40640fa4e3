package analysis_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/samples"
)

// TestServedOriginAndHeldLock records a token service whose HTTP
// handler holds its mutex across singleflight's Do while the callback
// blocks: the incident's origin must be the handler on the goroutines'
// own stacks (not whoever started the server), with net/http's Serve
// kept in the creation chain, and its fix must name the lock and the
// call made under it. The twin, which calls Do unlocked, stays silent.
func TestServedOriginAndHeldLock(t *testing.T) {
	liveTest(t, "runs a sample and its twin for 8 s each")
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	rep := analyzeRecording(t, record(t, filepath.Join(root, "libs", "token-handler-lock-held"), 8*time.Second, 2*time.Second, true, "-rate", "20"))
	if len(rep.Incidents) == 0 {
		t.Fatal("no incident")
	}
	inc := rep.Incidents[0]
	t.Logf("%s: %s; origin %+v; fix %s", inc.ID, inc.Summary, inc.Origin, inc.Fix)
	if inc.Origin == nil || inc.Origin.Function != "main.(*issuer).Token" || inc.Origin.Basis != "served" {
		t.Errorf("origin %+v, want main.(*issuer).Token from the goroutines' own stacks", inc.Origin)
	}
	if !chainHas(inc.CreationChain, "net/http.(*Server).Serve") {
		t.Errorf("creation chain %+v lost net/http's Serve", inc.CreationChain)
	}
	for _, want := range []string{"`i.mu`", "`i.sf.Do`", "main.(*issuer).mint"} {
		if !strings.Contains(inc.Fix, want) {
			t.Errorf("fix %q does not name %s", inc.Fix, want)
		}
	}
	if len(inc.Suspects) < 2 {
		t.Errorf("the lock's waiters and its blocked holder are not one incident: %v", inc.Suspects)
	}
	first := firstLine(t, rep)
	if strings.Contains(first, "`main.main`") || strings.Contains(first, "Start") {
		t.Errorf("first line %q names whoever started the server", first)
	}
	twin := analyzeRecording(t, record(t, filepath.Join(root, "libs", "token-handler-lock-free"), 8*time.Second, 2*time.Second, true, "-rate", "20"))
	for _, s := range twin.Suspects {
		t.Errorf("healthy twin: suspect %s %s at %s (%d, %+.1f/min)", s.ID, s.Pattern, s.Location, s.Count, s.GrowthPerMin)
	}
}

// chainHas reports whether a creation chain runs through function fn.
func chainHas(chain []analysis.CreationHop, fn string) bool {
	for _, h := range chain {
		for _, f := range h.Stack {
			if f.Function == fn {
				return true
			}
		}
	}
	return false
}

// TestNoReaderFix records a service that sends each order's event on a
// channel no statement of the program receives from: the fix must say
// so, naming the channel and the send, and must not offer a buffer or
// ctx.Done (neither helps a channel nobody reads). The twin, which has
// the reader, stays silent.
func TestNoReaderFix(t *testing.T) {
	liveTest(t, "runs a sample and its twin for 8 s each")
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	rep := analyzeRecording(t, record(t, filepath.Join(root, "events-never-read"), 8*time.Second, 2*time.Second, false, "-rate", "20"))
	if len(rep.Incidents) == 0 {
		t.Fatal("no incident")
	}
	inc := rep.Incidents[0]
	t.Logf("%s: %s; fix %s", inc.ID, inc.Summary, inc.Fix)
	for _, want := range []string{"No statement of the program receives from `o.events`", "main.(*orders).publish"} {
		if !strings.Contains(inc.Fix, want) {
			t.Errorf("fix %q does not say %q", inc.Fix, want)
		}
	}
	if strings.Contains(inc.Fix, "buffer") || strings.Contains(inc.Fix, "ctx.Done") {
		t.Errorf("fix %q offers what cannot help a channel nobody reads", inc.Fix)
	}
	twin := analyzeRecording(t, record(t, filepath.Join(root, "events-read"), 8*time.Second, 2*time.Second, false, "-rate", "20"))
	for _, s := range twin.Suspects {
		t.Errorf("healthy twin: suspect %s %s at %s (%d, %+.1f/min)", s.ID, s.Pattern, s.Location, s.Count, s.GrowthPerMin)
	}
}
