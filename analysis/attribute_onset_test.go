package analysis

import (
	"strings"
	"testing"
	"time"
)

// TestOnsetProcessStart plants a process start after where the growth
// line reaches zero: the onset may not lie before the start, the line's
// bound is dropped and the detail says so; without a start the detail
// says there is no lower bound.
func TestOnsetProcessStart(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 21, 35, 0, 0, time.UTC)
	var ts []int64
	var v []float64
	for i := 0; i < 5; i++ {
		ts = append(ts, t0.Add(time.Duration(i)*5*time.Second).UnixNano())
		v = append(v, float64(100+40*i)) // reaches zero ~12.5 s before t0
	}
	f := onsetFacts{ts: ts, v: v, fit: fitSeries(ts, v)}
	free := estimateOnset(f)
	if free == nil || !free.At.Before(t0) || !strings.Contains(free.Detail, "no lower bound") {
		t.Fatalf("without a start: onset %+v, want one before the first snapshot saying it has no lower bound", free)
	}
	start := t0.Add(-2 * time.Second)
	f.start, f.startFrom = start.UnixNano(), "/proc/42/stat"
	o := estimateOnset(f)
	if o == nil || o.At.Before(start) || o.Earliest.Before(start) || o.Latest.Before(start) {
		t.Fatalf("onset %+v lies before the process start %v", o, start)
	}
	if o.Basis != OnsetProcessStart || !strings.Contains(o.Detail, "/proc/42/stat") || !strings.Contains(o.Detail, "dropped as earlier than the process start: fit") {
		t.Errorf("onset basis %q detail %q, want the process start from /proc/42/stat and the fit dropped", o.Basis, o.Detail)
	}
	if !o.Latest.Equal(t0) {
		t.Errorf("latest %v, want the first sight %v", o.Latest, t0)
	}
}
