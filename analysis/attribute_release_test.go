package analysis_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/samples"
)

// callsBound is how far the call rate an incident estimates may be from
// the one the program counted of itself over the same dumps, as a
// fraction of the latter.
const callsBound = 0.25

// TestLibraryObjectIncidents records real programs that leak an object
// of a library leakscope has no rule for, one per call (a *sql.DB, a
// client-go workqueue, an OpenTelemetry TracerProvider) or the
// http.Transport of a new client per call, with dumps, heap profiles and
// a trace window (a workqueue's own loops with the user's worker parked
// in its Get among them), and their healthy twins with the fix applied. The
// first incident must name the user's frame and the library's own
// release method (found in the library's source), its call rate must be
// within callsBound of the rate the program counted of itself, its
// goroutines per call what the library starts per object, its heap per
// call near the program's own measure (see checkHeapPerCall); the twin
// must have no suspect.
func TestLibraryObjectIncidents(t *testing.T) {
	liveTest(t, "runs ten library samples for 10 s each")
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		module, name, twin string
		perCall            float64 // goroutines the library starts per object
		// heap: the heap per call is checked against the program's;
		// the Transport's connection buffers, allocated on the dialing
		// goroutine, are not attributed to it.
		heap bool
	}{
		{"libs", "sql-db-per-call", "sql-db-shared", 1, true},                     // connectionOpener
		{"libs", "otel-provider-per-request", "otel-provider-shut-down", 1, true}, // processQueue
		{"libs", "http-transport-per-call", "http-transport-shared", 2, false},    // readLoop, writeLoop
		{"kube", "workqueue-per-reconcile", "workqueue-shut-down", 1, true},       // the delaying queue's waitingLoop
		// waitingLoop, updateUnfinishedWorkLoop and the user's worker in Get
		{"kube", "workqueue-worker-per-reconcile", "workqueue-worker-shut-down", 3, true},
	}
	sem := make(chan struct{}, 2)
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
			rec := recordCounted(t, dir, 10*time.Second, 10*time.Second, 2*time.Second, true, nil, "-rate", "20", "-memprofilerate", "4096")
			rep := analyzeRecording(t, rec.dir)
			if len(rep.Incidents) == 0 {
				t.Fatalf("no incident; suspects %d", len(rep.Suspects))
			}
			inc := rep.Incidents[0]
			t.Logf("%s: %s; members %v; fix %s; evidence %v", inc.ID, inc.Summary, inc.Suspects, inc.Fix, inc.Evidence)
			if inc.Origin == nil || inc.Origin.Function != leak.Origin || inc.Pattern != leak.Pattern {
				t.Fatalf("top incident: origin %+v, pattern %s; want origin %s, pattern %s", inc.Origin, inc.Pattern, leak.Origin, leak.Pattern)
			}
			if user := "`" + leak.Origin + "`"; !strings.Contains(inc.Fix, leak.Fix) || !strings.Contains(inc.Fix, user) {
				t.Errorf("fix %q does not say %q in the user's terms (%s)", inc.Fix, leak.Fix, user)
			}
			if strings.Contains(inc.Fix, "ctx.Done") {
				t.Errorf("fix %q asks to change the library's goroutines", inc.Fix)
			}
			if first := firstLine(t, rep); !strings.Contains(first, leak.Origin) || !strings.Contains(first, leak.Fix) {
				t.Errorf("first line of the report %q does not name %s and %s", first, leak.Origin, leak.Fix)
			}
			own := rec.callsPerMin()
			t.Logf("calls/min: incident %.1f, program %.1f (%d calls); per call %.1f", inc.CallsPerMin, own, rec.calls[1]-rec.calls[0], inc.PerCall)
			if rec.calls[0] < 0 || math.Abs(inc.CallsPerMin-own) > callsBound*own {
				t.Errorf("%.1f calls/min, the program counted %.1f/min", inc.CallsPerMin, own)
			}
			if inc.PerCall != c.perCall {
				t.Errorf("%.1f goroutines per call, want %.0f", inc.PerCall, c.perCall)
			}
			if c.heap {
				checkHeapPerCall(t, inc, rec)
			} else {
				t.Logf("heap: %s; the program measured %.0f B per call", inc.HeapPerCall, rec.heapPerCall())
			}
			for _, s := range rep.Suspects {
				if s.Kind == analysis.KindHeap && strings.HasSuffix(s.Pattern, "-not-stopped") && !allocatedByTime(s.Stack) {
					t.Errorf("heap suspect %s at %s labelled %s, but the time package did not allocate it: %v", s.ID, s.Location, s.Pattern, s.Stack)
				}
			}
			twin := analyzeRecording(t, record(t, filepath.Join(root, c.module, c.twin), 10*time.Second, 2*time.Second, true, "-rate", "20"))
			for _, s := range twin.Suspects {
				t.Errorf("healthy twin %s: suspect %s %s at %s (%d, %+.1f/min)", c.twin, s.ID, s.Pattern, s.Location, s.Count, s.GrowthPerMin)
			}
		})
	}
}

// heapBound is how far an incident's heap per call may be from the live
// heap rise per call the program measured of itself, beyond the
// figure's own sampling bound, as a fraction of the latter: the program's
// figure holds everything else its heap did over the calls (buffers,
// maps growing, the runtime's own).
const heapBound = 0.35

// checkHeapPerCall checks an incident's heap per call: with its bound,
// the bound smaller than the figure, and the figure within that bound
// and heapBound of what the program measured of itself.
func checkHeapPerCall(t *testing.T, inc analysis.Incident, rec recorded) {
	t.Helper()
	own := rec.heapPerCall()
	t.Logf("heap: %s; the program measured %.0f B per call", inc.HeapPerCall, own)
	if inc.BytesPerCall <= 0 {
		t.Errorf("no heap per call at a sampling rate of 4 KiB: %q", inc.HeapPerCall)
		return
	}
	if inc.BytesPerCallBound <= 0 || inc.BytesPerCallBound >= inc.BytesPerCall {
		t.Errorf("heap per call %.0f ± %.0f B: no bound, or one larger than the figure", inc.BytesPerCall, inc.BytesPerCallBound)
	}
	if own <= 0 || math.Abs(inc.BytesPerCall-own) > inc.BytesPerCallBound+heapBound*own {
		t.Errorf("heap per call %.0f ± %.0f B, the program measured %.0f B per call", inc.BytesPerCall, inc.BytesPerCallBound, own)
	}
}

// TestTwoDumpOrigins records library samples with two goroutine dumps
// (and the heap profiles taken with them) and no trace: the leaked
// goroutines' "created by" line names a library function in the main
// goroutine, which runs every call, so the user's frame must come from a
// stack through that function (a heap profile's allocation stack) or
// from the program's call index (the only function calling into the
// library code that reaches it), and the fix must name the release. The
// Transport's connections are created by a dial goroutine that had
// exited: no incident may name main.main as their origin.
func TestTwoDumpOrigins(t *testing.T) {
	liveTest(t, "runs four library samples for 8 s each")
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"libs/sql-db-per-call", "libs/otel-provider-per-request", "libs/http-transport-per-call", "kube/workqueue-per-reconcile"} {
		t.Run(filepath.Base(name), func(t *testing.T) {
			dir := filepath.Join(root, name)
			truth, err := samples.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			leak := truth.Leaks[0]
			rec := record(t, dir, 8*time.Second, 8*time.Second, false, "-rate", "20")
			checkTwoDumps(t, name, leak, analyzeRecording(t, rec))
			// As `leakscope ingest` of the dump files makes it: no Go
			// version and no symbols of the target, so the Go root is
			// read only where it holds the frames' lines.
			t.Run("ingested", func(t *testing.T) { checkTwoDumps(t, name, leak, analyzeIngested(t, rec)) })
		})
	}
}

// analyzeIngested analyses a recorded bundle without what a capture
// reads of the target's executable (its Go version, release methods).
func analyzeIngested(t *testing.T, dir string) *analysis.Report {
	t.Helper()
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b.Manifest.Target.GoVersion, b.Manifest.Target.Methods = "", nil
	rep, err := analysis.Analyze(b, memory.DefaultAllocator, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// checkTwoDumps checks a two-dump report of a library sample (see
// TestTwoDumpOrigins).
func checkTwoDumps(t *testing.T, name string, leak samples.Leak, rep *analysis.Report) {
	t.Helper()
	for _, inc := range rep.Incidents {
		t.Logf("%s: %s (%s); fix %s; evidence %v", inc.ID, inc.Summary, inc.Pattern, inc.Fix, inc.Evidence)
		if inc.Origin != nil && inc.Origin.Function == "main.main" {
			t.Errorf("%s names main.main as its origin", inc.ID)
		}
	}
	if len(rep.Incidents) == 0 {
		t.Fatal("no incident")
	}
	inc := rep.Incidents[0]
	if filepath.Base(name) == "http-transport-per-call" {
		// The goroutines serve a Transport, and the program's source
		// builds one where the library has its own (DefaultTransport):
		// the caller stays unknown, naming both.
		if inc.Origin != nil {
			t.Fatalf("origin %+v, want unknown: net/http's DefaultTransport may have made them", inc.Origin)
		}
		if d := originDetail(inc); !strings.Contains(d, shortTruth(leak.Origin)) || !strings.Contains(d, "DefaultTransport") {
			t.Errorf("origin evidence %q names neither %s nor DefaultTransport", d, leak.Origin)
		}
		return
	}
	// The caller shows on a stack through the creator function (a heap
	// sample) or, from the program's source, as the only function
	// calling into the library code that reaches it.
	if inc.Origin == nil || inc.Origin.Function != leak.Origin || inc.Origin.Basis != "stacks" && inc.Origin.Basis != "source" || !strings.Contains(inc.Fix, leak.Fix) {
		t.Errorf("top incident: origin %+v, fix %q; want origin %s from stacks or source and %q (origin evidence %q)", inc.Origin, inc.Fix, leak.Origin, leak.Fix, originDetail(inc))
	}
	if first := firstLine(t, rep); !strings.Contains(first, leak.Origin) || !strings.Contains(first, leak.Fix) {
		t.Errorf("first line of the report %q does not name %s and %s", first, leak.Origin, leak.Fix)
	}
}

// originDetail is an incident's origin evidence ("" for none).
func originDetail(inc analysis.Incident) string {
	for _, e := range inc.Evidence {
		if e.Kind == "origin" {
			return e.Detail
		}
	}
	return ""
}

// shortTruth is a truth's function as reports shorten it: main.(*T).m
// stays, a path's directories go.
func shortTruth(fn string) string { return fn[strings.LastIndexByte(fn, '/')+1:] }

// allocatedByTime reports whether an allocation stack's first frame
// outside the runtime is the time package's.
func allocatedByTime(stack []analysis.Frame) bool {
	for _, f := range stack {
		if strings.HasPrefix(f.Function, "runtime.") || strings.HasPrefix(f.Function, "internal/") {
			continue
		}
		return strings.HasPrefix(f.Function, "time.")
	}
	return false
}
