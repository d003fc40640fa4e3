package fleet

import (
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
)

func capture(id, node, exe string, start time.Time, sus ...analysis.Suspect) Capture {
	m := bundle.NewManifest(id, "test")
	m.Node, m.Target.Exe = node, exe
	m.Start, m.End = start, start.Add(5*time.Minute)
	return Capture{ID: id, Manifest: m, Report: &analysis.Report{Suspects: sus}}
}

func TestSummarize(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	send := func(id string, count int64, score float64, first time.Time) analysis.Suspect {
		return analysis.Suspect{ID: id, Kind: analysis.KindGoroutine, Pattern: "chan-send-no-receiver", Location: "main.probe",
			Creator: "main.reconcile", Count: count, Score: score, GrowthPerMin: float64(count) / 5, FirstSeen: first}
	}
	heap := analysis.Suspect{ID: "H1", Kind: analysis.KindHeap, Pattern: "heap-growth", Location: "main.record", Count: 1 << 20, Score: 60}
	caps := []Capture{
		capture("a1", "node-a", "/usr/bin/operator", t0, send("G1", 100, 90, t0.Add(-time.Hour)), heap),
		capture("b1", "node-b", "/opt/operator", t0.Add(time.Hour), send("G2", 300, 95, t0.Add(30*time.Minute))),
		capture("a2", "node-a", "/usr/bin/operator", t0.Add(2*time.Hour), send("G1", 50, 70, t0.Add(90*time.Minute))),
		capture("x1", "node-a", "/usr/bin/other", t0, send("G1", 9, 99, t0)),
		{ID: "bad", Manifest: capture("bad", "node-c", "/usr/bin/operator", t0, send("G1", 1, 1, t0)).Manifest},
	}
	got := Summarize("operator", caps)
	if len(got.Captures) != 4 || got.Captures[0].ID != "a2" || len(got.Nodes) != 3 || got.Summary != "4 captures on 3 nodes: node-a, node-b, node-c" {
		t.Fatalf("captures %+v, nodes %v, %q", got.Captures, got.Nodes, got.Summary)
	}
	if len(got.Leaks) != 2 {
		t.Fatalf("leaks %+v", got.Leaks)
	}
	l := got.Leaks[0]
	if l.Location != "main.probe" || len(l.Nodes) != 2 || l.Captures != 3 || l.Worst.Count != 300 || l.Worst.Score != 95 || l.Worst.Capture != "b1" {
		t.Errorf("first leak %+v", l)
	}
	if !l.FirstSeen.Equal(t0.Add(-time.Hour)) || !l.LastSeen.Equal(t0.Add(2*time.Hour+5*time.Minute)) {
		t.Errorf("first leak seen %v .. %v", l.FirstSeen, l.LastSeen)
	}
	if len(l.Seen) != 3 || l.Seen[0].Capture != "a2" || l.Seen[1].Suspect != "G2" {
		t.Errorf("sightings %+v", l.Seen)
	}
	if h := got.Leaks[1]; h.Kind != analysis.KindHeap || len(h.Nodes) != 1 || h.Captures != 1 {
		t.Errorf("heap leak %+v", h)
	}
	svcs := Services(caps)
	if len(svcs) != 2 || svcs[0].Service != "operator" || svcs[0].Captures != 4 || svcs[0].Nodes != 3 || svcs[1].Service != "other" {
		t.Errorf("services %+v", svcs)
	}
}

// TestWorstFromOneCapture: the row's count, growth and score are one
// capture's, not each the largest of a different capture.
func TestWorstFromOneCapture(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s := func(count int64, growth, score float64) analysis.Suspect {
		return analysis.Suspect{ID: "G1", Kind: analysis.KindGoroutine, Pattern: "p", Location: "main.f", Count: count, GrowthPerMin: growth, Score: score}
	}
	v := Summarize("svc", []Capture{capture("a", "n1", "/svc", t0, s(1000, 5, 40)), capture("b", "n1", "/svc", t0.Add(time.Hour), s(200, 90, 80))})
	w := v.Leaks[0].Worst
	if w.Capture != "b" || w.Count != 200 || w.GrowthPerMin != 90 || w.Score != 80 {
		t.Errorf("worst %+v, want capture b's own figures", w)
	}
	if d := v.Leaks[0].Display; d.Count != "200 goroutines" || d.Score != "80.0" {
		t.Errorf("display %+v", d)
	}
}

// TestSinceIsOnset: a leak's "since" is the earliest onset its captures
// estimate, not the first snapshot that saw it; with no onset it is
// unknown, never the first sighting.
func TestSinceIsOnset(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s := analysis.Suspect{ID: "G1", Kind: analysis.KindGoroutine, Pattern: "p", Location: "main.f", Count: 5, FirstSeen: t0,
		Onset: &analysis.Onset{At: t0.Add(-3 * time.Hour), Basis: "longest-wait"}}
	late := s
	late.Onset = nil
	late.FirstSeen = t0.Add(-time.Hour)
	v := Summarize("svc", []Capture{capture("a", "n1", "/usr/bin/svc", t0, s), capture("b", "n2", "/usr/bin/svc", t0, late)})
	if len(v.Leaks) != 1 {
		t.Fatalf("leaks %+v", v.Leaks)
	}
	if l := v.Leaks[0]; !l.Since.Equal(t0.Add(-3*time.Hour)) || !l.FirstSeen.Equal(t0.Add(-time.Hour)) || l.Display.Since != "2026-05-01 09:00:00.000 UTC" {
		t.Errorf("since %v (%s), first seen %v; want the onset %v", l.Since, l.Display.Since, l.FirstSeen, t0.Add(-3*time.Hour))
	}
	v = Summarize("svc", []Capture{capture("b", "n2", "/usr/bin/svc", t0, late)})
	if l := v.Leaks[0]; !l.Since.IsZero() || l.Display.Since != "onset unknown" {
		t.Errorf("no onset: since %v (%s)", l.Since, l.Display.Since)
	}
}

// TestUnknownIdentity: a capture naming no node is counted as on an
// unknown node, never as a node named ""; a capture naming no program is
// compared with nothing.
func TestUnknownIdentity(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s := analysis.Suspect{ID: "G1", Kind: analysis.KindGoroutine, Pattern: "p", Location: "main.f", Count: 5, Score: 50}
	caps := []Capture{capture("a", "vm", "/svc", t0, s), capture("b", "", "/svc", t0, s), capture("c", "vm", "/svc", t0, s),
		capture("d", "vm", "", t0, s), capture("e", "", "", t0, s)}
	v := Summarize("svc", caps)
	if v.Summary != "3 captures on 1 node: vm; 1 capture on an unknown node" || len(v.Nodes) != 1 || v.UnknownNodes != 1 {
		t.Errorf("summary %q, nodes %q", v.Summary, v.Nodes)
	}
	if l := v.Leaks[0]; l.Display.Nodes != "vm, 1 capture on an unknown node" || l.Captures != 3 {
		t.Errorf("leak nodes %q, %d captures", l.Display.Nodes, l.Captures)
	}
	if svcs := Services(caps); len(svcs) != 1 || svcs[0].Service != "svc" || svcs[0].Nodes != 1 || svcs[0].UnknownNodes != 1 {
		t.Errorf("services %+v", svcs)
	}
	if un := Unidentified(caps); len(un) != 2 || un[0].ID != "d" && un[0].ID != "e" {
		t.Errorf("unidentified %+v", un)
	}
	if v := Summarize("", caps); len(v.Captures) != 0 || len(v.Leaks) != 0 {
		t.Errorf("the unknown service summarized as one: %+v", v)
	}
}

// TestBuilds: per leak, the builds it is present in and those captured
// without it.
func TestBuilds(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 9, 41, 0, 0, time.UTC)
	s := analysis.Suspect{ID: "G1", Kind: analysis.KindGoroutine, Pattern: "p", Location: "main.f", Count: 5, Score: 50, Onset: &analysis.Onset{At: t0}}
	build := func(c Capture, rev string) Capture {
		c.Manifest.Target.VCSRevision, c.Manifest.Target.ModuleVersion = rev, "(devel)"
		return c
	}
	leaky, fixed := "3f2a9c0e71bd44aa", "1c9e4b7a2d10ffee"
	caps := []Capture{
		build(capture("a", "n1", "/svc", t0.Add(time.Minute), s), leaky),
		build(capture("b", "n2", "/svc", t0.Add(2*time.Minute), s), leaky),
		build(capture("c", "n1", "/svc", t0.Add(time.Hour)), fixed),
		build(Capture{ID: "d", Manifest: capture("d", "n1", "/svc", t0.Add(2*time.Hour)).Manifest}, fixed),
	}
	v := Summarize("svc", caps)
	if len(v.Builds) != 2 || v.Builds[0].Build != "1c9e4b7a2d10" || v.Builds[0].Captures != 1 || v.Builds[1].Captures != 2 {
		t.Errorf("builds %+v", v.Builds)
	}
	l := v.Leaks[0]
	want := "present in every capture of build 3f2a9c0e71bd (2) since 2026-12-06 09:41:00.000 UTC; absent in build 1c9e4b7a2d10 (1 capture)"
	if l.Display.Builds != want {
		t.Errorf("builds text %q, want %q", l.Display.Builds, want)
	}
	caps = append(caps, build(capture("e", "n3", "/svc", t0.Add(3*time.Hour)), leaky))
	if got := Summarize("svc", caps).Leaks[0].Display.Builds; !strings.HasPrefix(got, "present in 2 of 3 captures of build 3f2a9c0e71bd since") {
		t.Errorf("builds text %q", got)
	}
}
