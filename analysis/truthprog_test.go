package analysis_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/capture"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/internal/format"
	"github.com/leakscope/leakscope/samples"
)

// truthRun is one capture of testdata/truthprog and its report.
type truthRun struct {
	rep    *analysis.Report
	b      *bundle.Bundle
	lag    time.Duration // the program's own pacing delay, measured by it
	first  time.Time     // when the first goroutine leaked, by the program's clock
	rate   float64       // goroutines leaked per second
	delay  time.Duration // from process start to the first leak
	source []string      // the program's source lines
}

// runTruthProg captures the program with dumps, heap profiles and trace
// windows and analyses the bundle.
func runTruthProg(t *testing.T) truthRun {
	t.Helper()
	if testing.Short() {
		t.Skip("captures a live program for 9 s")
	}
	r := truthRun{rate: 10, delay: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := samples.Start(ctx, "testdata/truthprog", "-rate", "10", "-delay", r.delay.String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	out := filepath.Join(t.TempDir(), "truth.lsb")
	if _, err := capture.Run(ctx, capture.Options{PID: p.PID, URL: p.URL, Out: out, Duration: 9 * time.Second,
		Interval: 2 * time.Second, TraceWindow: time.Second, NoEBPF: true}, nil); err != nil {
		t.Fatal(err)
	}
	ms, err := strconv.ParseFloat(strings.TrimSpace(string(httpGet(t, p.URL+"/lag"))), 64)
	if err != nil {
		t.Fatalf("lag: %v", err)
	}
	r.lag = time.Duration(ms * float64(time.Millisecond))
	ns, err := strconv.ParseInt(strings.TrimSpace(string(httpGet(t, p.URL+"/first"))), 10, 64)
	if err != nil || ns == 0 {
		t.Fatalf("first leak %d: %v", ns, err)
	}
	r.first = time.Unix(0, ns)
	if r.b, err = bundle.Open(out); err != nil {
		t.Fatal(err)
	}
	if r.rep, err = analysis.Analyze(r.b, memory.DefaultAllocator, analysis.Options{}); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("testdata/truthprog/main.go")
	if err != nil {
		t.Fatal(err)
	}
	r.source = strings.Split(string(src), "\n")
	return r
}

// lineOf is the 1-based line of the program's source holding text.
func (r truthRun) lineOf(t *testing.T, text string) int {
	for i, l := range r.source {
		if strings.Contains(l, text) {
			return i + 1
		}
	}
	t.Fatalf("no line %q in truthprog", text)
	return 0
}

func (r truthRun) suspect(t *testing.T, kind, location string) analysis.Suspect {
	for _, s := range r.rep.Suspects {
		if s.Kind == kind && s.Location == location {
			return s
		}
	}
	for _, s := range r.rep.Suspects {
		t.Logf("%s %s %s %s score %.1f", s.ID, s.Kind, s.Pattern, s.Location, s.Score)
	}
	t.Fatalf("no %s suspect at %s", kind, location)
	return analysis.Suspect{}
}

// TestKnownProgram checks the analysis's figures against a program whose
// truth is known: its leak rate, its creator chain, its cache growth at
// MemProfileRate=4096, when its leak began, and its source lines. Every
// bound is what the program's measured pacing delay, the heap sampling
// error and the snapshot times allow.
func TestKnownProgram(t *testing.T) {
	liveTest(t, "captures a live program for 9 s")
	r := runTruthProg(t)
	t.Logf("pacing lag %v", r.lag)
	g := r.suspect(t, analysis.KindGoroutine, "main.fetchQuote")
	for _, s := range r.rep.Suspects {
		t.Logf("%s %s at %s:%d: %s at %s, %s (%s); onset %s; object %q", s.ID, s.Kind, s.Location, s.Line, s.Display.Count, s.Display.CountAt, s.Display.Rate, s.Display.Range, s.Display.Onset, s.Object)
		for _, e := range s.Evidence {
			t.Logf("    %s: %s", e.Kind, e.Detail)
		}
	}

	t.Run("rate", func(t *testing.T) { knownRate(t, r, g) })

	t.Run("creator chain", func(t *testing.T) { knownChain(t, r, g) })

	t.Run("cache", func(t *testing.T) { knownCache(t, r, g) })

	t.Run("onset", func(t *testing.T) { knownOnset(t, r, g) })

	t.Run("source", func(t *testing.T) { knownSource(t, r, g) })

	t.Run("members", func(t *testing.T) { knownMembers(t, r, g) })
}

// knownRate: the dump growth and the trace's creation rate are the program's own, within what its pacing lag allows.
func knownRate(t *testing.T, r truthRun, g analysis.Suspect) {
	// The count at a snapshot is rate·(t−t0) less at most rate·lag+1;
	// a least-squares slope over T minutes then errs by at most about
	// 3·(rate·lag+1)/T.
	span := g.Range.To.Sub(g.Range.From).Minutes()
	e := r.rate*r.lag.Seconds() + 1
	want, allowed := 60*r.rate, 3*e/span
	if math.Abs(g.GrowthPerMin-want) > allowed {
		t.Errorf("dump growth %.1f/min, want %.0f ± %.1f", g.GrowthPerMin, want, allowed)
	}
	// The trace evidence counts creations inside the windows over the
	// time they cover: off by at most rate·lag+1 per window.
	var tr string
	for _, ev := range g.Evidence {
		if ev.Kind == "trace" {
			tr = ev.Detail
		}
	}
	if strings.HasPrefix(tr, "trace:") {
		t.Errorf("trace evidence repeats its kind: %q", tr)
	}
	m := regexp.MustCompile(`created at ([0-9.]+)/min over the ([0-9.a-zµ]+) the (\d+) trace windows cover`).FindStringSubmatch(tr)
	if m == nil {
		t.Fatalf("trace evidence %q has no creation rate", tr)
	}
	got, _ := strconv.ParseFloat(m[1], 64)
	covered, _ := time.ParseDuration(m[2])
	windows, _ := strconv.Atoi(m[3])
	allowedTrace := float64(windows) * e / covered.Minutes()
	if math.Abs(got-want) > allowedTrace {
		t.Errorf("trace creation rate %.1f/min (%s), want %.0f ± %.1f", got, tr, want, allowedTrace)
	}
}

// knownChain: every hop of the creator chain is named.
func knownChain(t *testing.T, r truthRun, g analysis.Suspect) {
	// main → go ticker() → dispatch → go fetchQuote: every hop.
	if want := "main.dispatch ← main.ticker ← main.main"; g.Creator != "main.dispatch" || strings.Join(g.Ancestry, " ← ") != want {
		t.Errorf("creator %s, chain %v; want %s", g.Creator, g.Ancestry, want)
	}
}

// knownCache: the cache's heap growth is a suspect at its line, with its object and rate.
func knownCache(t *testing.T, r truthRun, g analysis.Suspect) {
	// 4 KiB every 50 ms at MemProfileRate=4096 is a suspect: the floor
	// follows the sampling rate, not a fixed 1 MiB.
	h := r.suspect(t, analysis.KindHeap, "main.filler")
	if h.Line != r.lineOf(t, "buf := make([]byte, 4096)") {
		t.Errorf("heap suspect at line %d", h.Line)
	}
	if h.Range == nil || h.Range.Rise < h.Range.Floor || !strings.Contains(h.Range.FloorBasis, "4.0 KiB") || h.Range.Floor > 256<<10 {
		t.Errorf("range %+v: want a rise above a floor set by MemProfileRate 4 KiB", h.Range)
	}
	// Sampling error of a heap profile value v is about √(v·rate):
	// the slope errs by about 3·(2√(peak·rate) + bytes lagged)/T.
	span := h.Range.To.Sub(h.Range.From).Minutes()
	peak := float64(h.Count)
	want := 4096.0 * 20 * 60
	allowed := 3 * (2*math.Sqrt(peak*4096) + 4096*20*r.lag.Seconds() + 4096) / span
	if math.Abs(h.GrowthPerMin-want) > allowed {
		t.Errorf("cache growth %s/min, want %s/min ± %s", format.Bytes(h.GrowthPerMin), format.Bytes(want), format.Bytes(allowed))
	}
	// Which object grows: the map the buffers are put in.
	if mapAt := ":" + strconv.Itoa(r.lineOf(t, "cache[n] = buf")); !strings.HasPrefix(h.Object, "map written at ") || !strings.Contains(h.Object, mapAt) {
		t.Errorf("object %q, want the map written at line %s", h.Object, mapAt)
	}
	if h.Source == nil || h.Source.Status != analysis.SourceOK || !hasLine(h.Source, h.Line, "buf := make([]byte, 4096)") {
		t.Errorf("source %+v", h.Source)
	}
}

// knownOnset: the onset bounds the true one, the program's first leak.
func knownOnset(t *testing.T, r truthRun, g analysis.Suspect) {
	if r.b.Manifest.Target.ProcessStart.IsZero() {
		t.Fatal("no process start in the manifest")
	}
	// The program says when it leaked first (a loaded machine starts its
	// pacing late); the estimate may lean on the process start, known to
	// 10 ms and btime to a second, and a snapshot's time is its request's
	// start.
	lo, hi := r.first.Add(-time.Second-10*time.Millisecond), r.first.Add(time.Second+10*time.Millisecond)
	o := g.Onset
	if o == nil || o.Latest.Before(lo) || !o.Earliest.IsZero() && o.Earliest.After(hi) {
		t.Fatalf("onset %+v does not bound the first leak at %v", o, r.first)
	}
	if o.At.Before(lo) || o.At.After(hi) || !o.At.Before(g.FirstSeen.Add(time.Nanosecond)) {
		t.Errorf("onset %v (%s: %s), first leak at %v (estimate allowed in [%v, %v]), first seen %v", o.At, o.Basis, o.Detail, r.first, lo, hi, g.FirstSeen)
	}
}

// knownSource: the blocked line is quoted from the kept source.
func knownSource(t *testing.T, r truthRun, g analysis.Suspect) {
	if g.Source == nil || g.Source.Status != analysis.SourceOK || !hasLine(g.Source, g.Line, "<-never") {
		t.Errorf("source %+v", g.Source)
	}
}

// knownMembers: the members query selects the suspect's count at its snapshot.
func knownMembers(t *testing.T, r truthRun, g analysis.Suspect) {
	sel, err := r.rep.Select(r.b, memory.DefaultAllocator, g.ID)
	if err != nil || int64(len(sel.Goids)) != g.Count || !sel.Snapshot.Equal(g.CountAt) {
		t.Errorf("selection of %d goroutines at %v (%v), suspect %d at %v", len(sel.Goids), sel.Snapshot, err, g.Count, g.CountAt)
	}
}

func hasLine(q *analysis.SourceQuote, line int, text string) bool {
	for _, l := range q.Lines {
		if l.Line == line && strings.Contains(l.Text, text) {
			return true
		}
	}
	return false
}
