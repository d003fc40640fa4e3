package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/capture"
)

// feed runs the rule over a goroutine series sampled every 10 s and
// returns the index of the sample at which it fired (-1: never).
func feed(r Rule, counts []int64) (int, string) {
	var s series
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, c := range counts {
		ts := t0.Add(time.Duration(i) * 10 * time.Second)
		s.add(capture.Totals{TS: ts, Goroutines: c, HeapInuse: 1 << 20}, r.Window)
		if why, ok := r.evaluate(&s, ts); ok {
			return i, why
		}
	}
	return -1, ""
}

func TestRule(t *testing.T) {
	r := Rule{Window: time.Minute, GoroutinesPerMin: 50, For: 30 * time.Second, MinPoints: 4}
	grow := make([]int64, 20)
	flat := make([]int64, 20)
	saw := make([]int64, 20)
	for i := range grow {
		grow[i] = 100 + int64(i)*20 // 120 a minute
		flat[i] = 500
		saw[i] = 100 + int64(i%2)*500
	}
	// Fires once four samples give a slope and it has held for 30 s.
	if at, why := feed(r, grow); at != 6 || !strings.Contains(why, "goroutines growing by 120 a minute") {
		t.Errorf("growing series fired at %d (%q), want 6", at, why)
	}
	for name, s := range map[string][]int64{"flat": flat, "sawtooth": saw} {
		if at, why := feed(r, s); at >= 0 {
			t.Errorf("%s series fired at %d: %s", name, at, why)
		}
	}
	// A burst that ends (goroutines finish) before For has passed does not
	// fire.
	brief := []int64{100, 120, 140, 160, 180, 100, 100, 100, 100, 100, 100, 100, 100}
	if at, why := feed(r, brief); at >= 0 {
		t.Errorf("brief growth fired at %d: %s", at, why)
	}
	if at, _ := feed(Rule{Window: time.Minute, For: 0, MinPoints: 2}, grow); at >= 0 {
		t.Error("a rule with no limits fired")
	}
}
