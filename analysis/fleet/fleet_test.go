package fleet

import (
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
	if len(got.Captures) != 4 || got.Captures[0].ID != "a2" || len(got.Nodes) != 3 {
		t.Fatalf("captures %+v, nodes %v", got.Captures, got.Nodes)
	}
	if len(got.Leaks) != 2 {
		t.Fatalf("leaks %+v", got.Leaks)
	}
	l := got.Leaks[0]
	if l.Location != "main.probe" || len(l.Nodes) != 2 || l.Captures != 3 || l.MaxCount != 300 || l.MaxScore != 95 {
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

// TestSinceIsOnset: a leak's "since" is the earliest onset its captures
// estimate, not the first snapshot that saw it.
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
	if l := v.Leaks[0]; !l.Since.Equal(t0.Add(-3*time.Hour)) || !l.FirstSeen.Equal(t0.Add(-time.Hour)) {
		t.Errorf("since %v, first seen %v; want the onset %v", l.Since, l.FirstSeen, t0.Add(-3*time.Hour))
	}
}
