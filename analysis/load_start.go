package analysis

import (
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// CaptureStart is when the capture itself began: its first artifact that
// is not the node agent's history ([bundle.RoleHistory]), the manifest's
// start for a bundle without history (whose start is its earliest data,
// the history's when it has one), and its end for a bundle of history
// alone. Every view that says when a capture began says this.
func CaptureStart(m bundle.Manifest) time.Time {
	var own time.Time
	history := false
	for _, a := range m.Artifacts {
		if a.Time.IsZero() {
			continue
		}
		if a.Role == bundle.RoleHistory {
			history = true
			continue
		}
		if own.IsZero() || a.Time.Before(own) {
			own = a.Time
		}
	}
	switch {
	case !history:
		return m.Start
	case own.IsZero():
		return m.End
	}
	return own
}
