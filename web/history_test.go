package web

import (
	"testing"
	"time"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// TestHistoryOf counts one history snapshot per watch sample (the agent
// reads a goroutine and a heap profile a few ms apart: one sample, not
// two) and dates the capture from its first own artifact.
func TestHistoryOf(t *testing.T) {
	t0 := time.Date(2027, 2, 1, 10, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	m := bundle.Manifest{Start: t0, End: at(9000)}
	for i := range 5 {
		m.Artifacts = append(m.Artifacts,
			bundle.Artifact{Kind: "pprof", Profile: "goroutine", Role: bundle.RoleHistory, Time: at(1000 * i)},
			bundle.Artifact{Kind: "pprof", Profile: "heap", Role: bundle.RoleHistory, Time: at(1000*i + 3)})
	}
	m.Artifacts = append(m.Artifacts, bundle.Artifact{Kind: "dump", Time: at(5200)}, bundle.Artifact{Kind: "trace", Time: at(5100)})
	h := historyOf(m)
	if h == nil || len(h.Snapshots) != 5 {
		t.Fatalf("history %+v: want 5 snapshots, one per goroutine profile", h)
	}
	if !h.Start.Equal(t0) || !h.End.Equal(at(4003)) || !h.CaptureStart.Equal(at(5100)) {
		t.Errorf("history from %v to %v, capture from %v; want %v, %v, %v", h.Start, h.End, h.CaptureStart, t0, at(4003), at(5100))
	}
	if got := analysis.CaptureStart(m); !got.Equal(at(5100)) {
		t.Errorf("capture began %v, want its first own artifact %v", got, at(5100))
	}
	plain := bundle.Manifest{Start: at(100), End: at(900), Artifacts: []bundle.Artifact{{Kind: "dump", Time: at(200)}}}
	if historyOf(plain) != nil || !analysis.CaptureStart(plain).Equal(at(100)) {
		t.Errorf("a capture without history: history %+v, start %v; want none and the manifest's start", historyOf(plain), analysis.CaptureStart(plain))
	}
}
