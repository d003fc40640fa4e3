package agent

import (
	"fmt"
	"time"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/capture"
	"github.com/leakscope/leakscope/internal/format"
)

// Rule is the agent's own growth rule: the least-squares slope of a
// process's goroutine count (or heap in use) over Window above a limit,
// at every watch for at least For. It is the agent-side twin of the
// deriv() alerts in deploy/prometheus.
type Rule struct {
	Window time.Duration
	// GoroutinesPerMin and HeapBytesPerMin are the growth limits; 0
	// disables that half of the rule.
	GoroutinesPerMin float64
	HeapBytesPerMin  float64
	For              time.Duration
	// MinPoints is the fewest watch samples a slope is trusted on.
	MinPoints int
}

// DefaultRule: 50 goroutines a minute over 10 minutes, for 3 minutes (the
// seed alert, done right); heap growth off unless asked for.
var DefaultRule = Rule{Window: 10 * time.Minute, GoroutinesPerMin: 50, For: 3 * time.Minute, MinPoints: 4}

// series keeps a process's watch samples over the rule's window and when
// the rule's condition started to hold.
type series struct {
	samples []capture.Totals
	since   time.Time // zero: condition does not hold
}

// add appends a sample and drops those older than window.
func (s *series) add(t capture.Totals, window time.Duration) {
	s.samples = append(s.samples, t)
	cut := 0
	for cut < len(s.samples) && t.TS.Sub(s.samples[cut].TS) > window {
		cut++
	}
	s.samples = s.samples[cut:]
}

// slopes fits the goroutine and heap series.
func (s *series) slopes() (goroutines, heap analysis.Fit) {
	g := make([]analysis.Point, len(s.samples))
	h := make([]analysis.Point, len(s.samples))
	for i, t := range s.samples {
		g[i] = analysis.Point{TS: t.TS, Value: float64(t.Goroutines)}
		h[i] = analysis.Point{TS: t.TS, Value: float64(t.HeapInuse)}
	}
	return analysis.FitPoints(g), analysis.FitPoints(h)
}

// evaluate updates the condition with the latest sample and returns a
// reason when the rule fires (the condition has held for r.For).
func (r Rule) evaluate(s *series, now time.Time) (string, bool) {
	if len(s.samples) < max(2, r.MinPoints) {
		s.since = time.Time{}
		return "", false
	}
	g, h := s.slopes()
	var why string
	switch {
	case r.GoroutinesPerMin > 0 && g.Slope > r.GoroutinesPerMin:
		why = fmt.Sprintf("goroutines growing by %.0f a minute over %v (limit %g)", g.Slope, r.Window, r.GoroutinesPerMin)
	case r.HeapBytesPerMin > 0 && h.Slope > r.HeapBytesPerMin:
		why = fmt.Sprintf("heap in use growing by %s a minute over %v (limit %s)", format.Bytes(h.Slope), r.Window, format.Bytes(r.HeapBytesPerMin))
	default:
		s.since = time.Time{}
		return "", false
	}
	if s.since.IsZero() {
		s.since = now
	}
	if now.Sub(s.since) < r.For {
		return "", false
	}
	return why + fmt.Sprintf(" for %v", now.Sub(s.since).Round(time.Second)), true
}
