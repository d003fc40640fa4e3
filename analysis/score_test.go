package analysis

import (
	"testing"
	"time"
)

// TestStuckScoreMeansSomething checks the one scoring function on what
// the documentation promises: a two-goroutine lock cycle parked for three
// hours is near certain, a one-second-old channel wait in a busy process
// is not reported, and each kind of evidence moves the score the way its
// weight says.
func TestStuckScoreMeansSomething(t *testing.T) {
	ts := []int64{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()}
	lockSite := &site{state: "sync.Mutex.Lock", counts: []float64{2}, maxWait: 180,
		frames: []Frame{{Function: "internal/sync.(*Mutex).lockSlow"}, {Function: "main.transfer"}}, entry: "main.transfer"}
	cycle := &stuckFacts{members: 2, parked: 2, unreached: 2, inCycle: 2, kind: "lock"}
	sc := scoreSite(lockSite, ts, nil, 0, false, nil, cycle)
	if sc.score < 90 || sc.stuck < 0.999 {
		t.Errorf("a lock cycle parked for 3 h scores %.1f (stuck %.4f), want ≥ 90", sc.score, sc.stuck)
	}
	sendSite := &site{state: "chan send", counts: []float64{1},
		frames: []Frame{{Function: "runtime.chansend1"}, {Function: "main.produce"}}, entry: "main.produce"}
	fresh := &stuckFacts{members: 1, parked: 1, unreached: 1, kind: "chan send", liveElsewhere: true}
	sc2 := scoreSite(sendSite, ts, nil, 0, false, nil, fresh)
	if sc2.score >= DefaultMinScore {
		t.Errorf("a one-second channel send in a busy process scores %.1f, want below %v", sc2.score, DefaultMinScore)
	}
	t.Logf("lock cycle, 3 h: %.1f; fresh send: %.1f", sc.score, sc2.score)
	// Each evidence kind moves the verdict its weight's way.
	base := scoreSite(sendSite, ts, nil, 0, false, nil, fresh).stuck
	for name, f := range map[string]func(*stuckFacts){
		"nothing else can run": func(f *stuckFacts) { f.liveElsewhere = false },
		"no partner":           func(f *stuckFacts) { f.noWaker, f.noWakerExact = 1, 1 },
	} {
		g := *fresh
		f(&g)
		if got := scoreSite(sendSite, ts, nil, 0, false, nil, &g).stuck; got <= base {
			t.Errorf("%s: stuck %.4f, not above %.4f", name, got, base)
		}
	}
	held := *fresh
	held.byMention = 1
	if got := scoreSite(sendSite, ts, nil, 0, false, nil, &held).stuck; got >= base/10 {
		t.Errorf("held by a goroutine that can run: stuck %.4f, not far below %.4f", got, base)
	}
}
