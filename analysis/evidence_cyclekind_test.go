package analysis

import "testing"

// TestCycleKind checks the names of wait-for cycles: read locks and a
// writer on one lock are a reader taking its lock again behind a queued
// writer; on two locks, a lock-order cycle.
func TestCycleKind(t *testing.T) {
	for _, c := range []struct {
		kinds []string
		want  string
	}{
		{[]string{"lock"}, "lock-cycle"},
		{[]string{"rlock", "lock"}, "rlock-writer"},
		{[]string{"rlock", "lock", twoLocks}, "lock-cycle"},
		{[]string{"lock", "chan send"}, "lock-chan-cycle"},
		{[]string{"rlock", "cond"}, "lock-wait-cycle"},
	} {
		m := map[string]bool{}
		for _, k := range c.kinds {
			m[k] = true
		}
		if got := cycleKind(m); got != c.want {
			t.Errorf("%v: %s, want %s", c.kinds, got, c.want)
		}
	}
}

// TestGCWaitIsNoLock checks that a goroutine parked in a semaphore
// acquire for a garbage collection cycle (an allocation's assist) can
// run once the cycle ends: it waits for no lock of the program.
func TestGCWaitIsNoLock(t *testing.T) {
	frames := []Frame{{Function: "runtime.semacquire1"}, {Function: "runtime.gcStart"}, {Function: "runtime.mallocgc"}, {Function: "main.fill"}}
	if k := waitKind("semacquire", frames); k != "" {
		t.Errorf("GC wait is kind %q, want none (it can run)", k)
	}
	locked := []Frame{{Function: "runtime.semacquire1"}, {Function: "internal/sync.(*Mutex).lockSlow"}, {Function: "sync.(*Mutex).Lock"}, {Function: "main.f"}}
	if k := waitKind("semacquire", locked); k != "lock" {
		t.Errorf("mutex wait is kind %q, want lock", k)
	}
	// A debug=2 dump hides the runtime's frames: the GC wait shows as
	// semacquire at the program's allocation.
	if k := waitKind("semacquire", []Frame{{Function: "main.Grpc3017.func2"}}); k != "" {
		t.Errorf("GC wait in a dump is kind %q, want none (it can run)", k)
	}
	fd := []Frame{{Function: "internal/poll.runtime_Semacquire"}, {Function: "main.f"}}
	if k := waitKind("semacquire", fd); k != "sema" {
		t.Errorf("a semaphore of the program is kind %q, want sema", k)
	}
	if k := waitKind("semacquire", nil); k != "sema" {
		t.Errorf("without frames the kind is %q, want sema", k)
	}
}
