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
	sc := scoreSite(&candidate{s: lockSite, facts: cycle}, ts)
	if sc.score < 90 || sc.stuck < 0.999 {
		t.Errorf("a lock cycle parked for 3 h scores %.1f (stuck %.4f), want ≥ 90", sc.score, sc.stuck)
	}
	sendSite := &site{state: "chan send", counts: []float64{1},
		frames: []Frame{{Function: "runtime.chansend1"}, {Function: "main.produce"}}, entry: "main.produce"}
	fresh := &stuckFacts{members: 1, parked: 1, unreached: 1, kind: "chan send", liveElsewhere: true}
	sc2 := scoreSite(&candidate{s: sendSite, facts: fresh}, ts)
	if sc2.score >= DefaultMinScore {
		t.Errorf("a one-second channel send in a busy process scores %.1f, want below %v", sc2.score, DefaultMinScore)
	}
	t.Logf("lock cycle, 3 h: %.1f; fresh send: %.1f", sc.score, sc2.score)
	// Each evidence kind moves the verdict its weight's way.
	base := scoreSite(&candidate{s: sendSite, facts: fresh}, ts).stuck
	for name, f := range map[string]func(*stuckFacts){
		"nothing else can run": func(f *stuckFacts) { f.liveElsewhere = false },
		"no partner":           func(f *stuckFacts) { f.noWaker, f.noWakerExact = 1, 1 },
	} {
		g := *fresh
		f(&g)
		if got := scoreSite(&candidate{s: sendSite, facts: &g}, ts).stuck; got <= base {
			t.Errorf("%s: stuck %.4f, not above %.4f", name, got, base)
		}
	}
	held := *fresh
	held.byMention = 1
	if got := scoreSite(&candidate{s: sendSite, facts: &held}, ts).stuck; got >= base/10 {
		t.Errorf("held by a goroutine that can run: stuck %.4f, not far below %.4f", got, base)
	}
	// A library's own goroutine (no frame of the program's code) parked
	// for a while in a program that runs elsewhere is machinery waiting
	// for work, not a stuck group: the same wait in the program's code
	// scores far higher.
	loop := func(fn string) *site {
		return &site{state: "select", counts: []float64{1, 1}, persist: persistStat{members: 1, persisted: 1},
			frames: []Frame{{Function: fn, File: "/x/" + fn + ".go"}, {Function: "google.golang.org/grpc/internal/transport.(*loopyWriter).run", File: "/root/go/pkg/mod/google.golang.org/grpc@v1.85.0/internal/transport/controlbuf.go"}},
			entry:  "google.golang.org/grpc/internal/transport.(*loopyWriter).run"}
	}
	idle := &stuckFacts{members: 1, parked: 1, unreached: 1, kind: "select", liveElsewhere: true, snapshots: 2, spanSec: 23, progressed: true, depth: 1}
	libSite := loop("google.golang.org/grpc/internal/transport.(*controlBuffer).get")
	libSite.frames[0].File = "/root/go/pkg/mod/google.golang.org/grpc@v1.85.0/internal/transport/controlbuf.go"
	lib := scoreSite(&candidate{s: libSite, facts: idle}, []int64{ts[0], ts[0] + 23e9})
	user := scoreSite(&candidate{s: loop("main.waitReply"), facts: idle}, []int64{ts[0], ts[0] + 23e9})
	if lib.score >= DefaultMinScore || user.stuck <= lib.stuck {
		t.Errorf("library loop parked 23 s: score %.1f (stuck %.3f), want below %v and below the same wait in main.waitReply (stuck %.3f)", lib.score, lib.stuck, DefaultMinScore, user.stuck)
	}
}
