package analysis

import "testing"

// TestClassifyWithoutSource: a select in the program's code whose source
// is absent is undecided (able to run: a timer case cannot be ruled out)
// until the runtime's wait time rules out every timer shorter than it,
// the runtime marks it leaked, or the runtime found no timer at all.
func TestClassifyWithoutSource(t *testing.T) {
	frames := []Frame{
		{Function: "runtime.gopark", File: "/usr/local/go/src/runtime/proc.go", Line: 460},
		{Function: "runtime.selectgo", File: "/usr/local/go/src/runtime/select.go", Line: 351},
		{Function: "main.waitBoth", File: "/src/app/main.go", Line: 12},
		{Function: "main.main.gowrap1", File: "/src/app/main.go", Line: 20},
	}
	for _, c := range []struct {
		name  string
		g     gor
		sc    waitScene
		class gClass
		undec bool
		bound int64
	}{
		{"fresh", gor{state: "select"}, waitScene{}, classLive, true, 0},
		{"three minutes", gor{state: "select", wait: 3}, waitScene{}, classParked, false, 3},
		{"leaked", gor{state: "select", leaked: true}, waitScene{}, classParked, false, 0},
		{"all asleep", gor{state: "select"}, waitScene{noTimers: true}, classParked, false, 0},
	} {
		got := classifyGor(&c.g, frames, nil, noProgram, c.sc)
		if got.class != c.class || got.undecided != c.undec || got.timerBound != c.bound {
			t.Errorf("%s: class %v undecided %v bound %d, want %v %v %d", c.name, got.class, got.undecided, got.timerBound, c.class, c.undec, c.bound)
		}
		if got.class == classParked && got.kind != "select" {
			t.Errorf("%s: parked with kind %q, want select", c.name, got.kind)
		}
	}
}
