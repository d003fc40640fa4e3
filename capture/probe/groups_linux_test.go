//go:build linux

package probe

import (
	"context"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSetAttached detaches and re-attaches the goroutine probes of a tracer
// on this process: while detached no goroutine event arrives at all (of any
// goroutine of the process), attached again each spawned goroutine is seen.
func TestSetAttached(t *testing.T) {
	requirePrivileged(t)
	tr, err := Attach(os.Getpid(), Options{Goroutines: true, RingBufferBytes: 16 << 20})
	skipIfNotSupported(t, err)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	// drain delivers what is buffered and counts the goroutine events that
	// happened after since (events of the phase before may still arrive).
	drain := func(since int64) (creates, exits int) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := tr.Run(ctx, func(ev Event) {
			if ev.MonoNS < since {
				return
			}
			switch ev.Kind {
			case kindNames[kindGoCreate]:
				creates++
			case kindNames[kindGoExit]:
				exits++
			}
		}); err != nil {
			t.Fatal(err)
		}
		return creates, exits
	}
	phase := func(name string, wantSeen bool) {
		t.Helper()
		since := monoNow(t)
		spawnBatch()
		c, e := drain(since)
		// The last goroutines may exit after Wait returns (Done runs
		// before goexit): drain until every event has come, or for 10 s
		// (a ceiling for a loaded machine, not a measure of speed).
		for deadline := time.Now().Add(10 * time.Second); wantSeen && (c < batch || e < batch) && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
			c2, e2 := drain(since)
			c, e = c+c2, e+e2
		}
		switch {
		case wantSeen && (c < batch || e < batch):
			t.Errorf("%s: %d go_create and %d go_exit events for %d goroutines", name, c, e, batch)
		case !wantSeen && c+e > 0:
			t.Errorf("%s: %d go_create and %d go_exit events while detached", name, c, e)
		}
		if got := tr.Attached(GroupGoroutines); got != wantSeen {
			t.Errorf("%s: Attached = %v", name, got)
		}
	}
	drain(0)
	phase("attached", true)
	if err := tr.SetAttached(GroupGoroutines, false); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetAttached(GroupGoroutines, false); err != nil {
		t.Fatalf("detach twice: %v", err)
	}
	phase("detached", false)
	if err := tr.SetAttached(GroupGoroutines, true); err != nil {
		t.Fatal(err)
	}
	phase("attached again", true)
	if err := tr.SetAttached(GroupAlloc, true); err != nil || tr.Attached(GroupAlloc) {
		t.Errorf("a group not enabled: SetAttached = %v, Attached = %v", err, tr.Attached(GroupAlloc))
	}
	if d := tr.Stats().Drops[kindNames[kindGoCreate]]; d > 0 {
		t.Errorf("%d go_create records dropped", d)
	}
	tr.Close()
	if err := tr.SetAttached(GroupGoroutines, true); err == nil {
		t.Error("SetAttached after Close succeeded")
	}
}

// monoNow reads CLOCK_MONOTONIC, the clock of the events' MonoNS.
func monoNow(t *testing.T) int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	return ts.Nano()
}
