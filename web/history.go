package web

import (
	"slices"
	"time"

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
	// one per time (a goroutine and a heap profile taken together are
	// one), as decimal strings of Unix ns.
	Snapshots []string `json:"snapshots"`
}

// historyOf returns the span of m's history snapshots, or nil when the
// bundle holds none.
func historyOf(m bundle.Manifest) *historySpan {
	var h *historySpan
	seen := map[int64]bool{}
	var ts []int64
	var own time.Time
	for _, a := range m.Artifacts {
		if a.Time.IsZero() {
			continue
		}
		if a.Role != bundle.RoleHistory {
			if own.IsZero() || a.Time.Before(own) {
				own = a.Time
			}
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
		if n := a.Time.UnixNano(); !seen[n] {
			seen[n] = true
			ts = append(ts, n)
		}
	}
	if h == nil {
		return nil
	}
	h.CaptureStart = own
	if own.IsZero() {
		h.CaptureStart = m.End
	}
	slices.Sort(ts)
	h.Snapshots = decimal(ts)
	return h
}
