package web

import (
	"slices"
	"time"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// historySpan is when a capture's history snapshots were taken: the
// goroutine and heap profiles the node agent recorded before the capture
// was triggered (manifest artifacts of role bundle.RoleHistory), which
// the workbench's chart shades apart from the capture's own snapshots.
type historySpan struct {
	// Start and End are the first and last history snapshot;
	// CaptureStart is when the capture itself began: its first own
	// artifact (the manifest's start is the bundle's earliest data, the
	// history's).
	Start        time.Time `json:"start"`
	End          time.Time `json:"end"`
	CaptureStart time.Time `json:"capture_start"`
	// Snapshots are the times of the history snapshots, oldest first,
	// as decimal strings of Unix ns: one per watch sample, dated by its
	// goroutine profile (the agent reads a goroutine and a heap profile
	// each time, a few ms apart; a history of heap profiles alone is
	// dated by those).
	Snapshots []string `json:"snapshots"`
}

// historyOf returns the span of m's history snapshots, or nil when the
// bundle holds none.
func historyOf(m bundle.Manifest) *historySpan {
	var h *historySpan
	byProfile := map[string][]int64{}
	own := analysis.CaptureStart(m)
	for _, a := range m.Artifacts {
		if a.Time.IsZero() || a.Role != bundle.RoleHistory {
			continue
		}
		if h == nil {
			h = &historySpan{Start: a.Time, End: a.Time}
		}
		if a.Time.Before(h.Start) {
			h.Start = a.Time
		}
		if a.Time.After(h.End) {
			h.End = a.Time
		}
		byProfile[a.Profile] = append(byProfile[a.Profile], a.Time.UnixNano())
	}
	if h == nil {
		return nil
	}
	h.CaptureStart = own
	ts := byProfile["goroutine"]
	if len(ts) == 0 {
		ts = byProfile["heap"]
	}
	slices.Sort(ts)
	h.Snapshots = decimal(slices.Compact(ts))
	return h
}
