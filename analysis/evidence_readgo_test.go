package analysis_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

var wakeProg = &testProg{name: "wakeprog"}

// TestWakersReadAsGo runs wakeprog, whose parked goroutines only the
// program read as Go tells apart: a consumer sleeping in its range body
// receives again (so its workers and their producer can be woken), a
// context's deadline closes its Done channel, and a time.AfterFunc
// callback can send, as can a context.AfterFunc callback whose context's
// cancel is called; none of these is a suspect. The one bug is named:
// the lazy dial blocked inside sync.Once, with the callers queued on the
// Once's mutex folded under it as goroutines waiting for the lock it
// holds.
func TestWakersReadAsGo(t *testing.T) {
	bin := wakeProg.build(t)
	rep := analyseDumps(t, true, startProg(t, bin).dump(t))
	for _, loc := range []string{"main.consume", "main.work", "main.produce", "main.hold", "main.reap", "main.drain"} {
		if s := suspectAt(rep, loc); s != nil {
			t.Errorf("%s is a suspect: %s %s %+v", loc, s.Verdict, s.Pattern, s.Evidence)
		}
	}
	s := suspectAt(rep, "main.(*client).dial")
	if s == nil || s.Pattern != "lock-held-while-blocked" {
		t.Fatalf("the dial blocked in sync.Once: %+v; suspects %+v", s, rep.Suspects)
	}
	folded := int64(0)
	for _, c := range s.Consequences {
		if c.Location == "main.(*client).call" && strings.Contains(c.State, "Mutex.Lock") {
			folded += c.Count
		}
	}
	if folded != 2 {
		t.Errorf("callers queued on the Once folded: %d, want 2: %+v", folded, s.Consequences)
	}
	if len(rep.Suspects) != 1 {
		t.Errorf("%d suspects, want the dial alone: %+v", len(rep.Suspects), rep.Suspects)
	}
}

var groupProg = &testProg{name: "groupprog"}

// TestGroupWaitersBounded runs groupprog: five calls of a fan-out group
// leaked their closers, parked in the group's Wait, while a member of a
// sixth call still runs. That member's closure holds one group, so it
// can end one Wait at most: five closers are stuck, with the ten
// senders whose Done they wait for; the same with sync.WaitGroup.Go.
func TestGroupWaitersBounded(t *testing.T) {
	bin := groupProg.build(t)
	rep := analyseDumps(t, true, startProg(t, bin).dump(t))
	for _, s := range rep.Suspects {
		t.Logf("suspect %s %s %s at %s: %d", s.ID, s.Verdict, s.Pattern, s.Location, s.Count)
		for _, c := range s.Consequences {
			t.Logf("  folded %s [%s] ×%d", c.Location, c.State, c.Count)
		}
	}
	for _, fn := range []string{"main.first", "main.firstWG"} {
		senders := suspectAt(rep, fn+".func1")
		if senders == nil || senders.Count != 10 {
			t.Fatalf("%s's blocked senders: %+v; want 10", fn, senders)
		}
		closers := int64(0)
		for _, c := range senders.Consequences {
			if strings.Contains(c.State, "WaitGroup.Wait") {
				closers += c.Count
			}
		}
		for _, at := range []string{"main.(*group).Wait", fn + ".func2"} {
			if s := suspectAt(rep, at); s != nil {
				closers += s.Count
			}
		}
		if closers != 5 {
			t.Errorf("%s's closers stuck: %d, want 5 (the live fetch can end its own group's Wait alone)", fn, closers)
		}
	}
}

var unstartedProg = &testProg{name: "unstartedprog"}

// TestUnstartedGoroutineWakes runs unstartedprog, which dumps itself
// while a goroutine it started has not run yet: the dump shows it only
// in its go statement's wrapper. That goroutine will send what its
// creator waits for, so the creator is not stuck; its twin, whose sender
// waits on a gate nothing opens, is, folded under that sender; the
// goroutine yet to run is the program's, so not all of it is asleep.
func TestUnstartedGoroutineWakes(t *testing.T) {
	bin := unstartedProg.build(t)
	out, err := exec.Command(bin).Output()
	if err != nil || !bytes.Contains(out, []byte("main.watch.gowrap1()")) {
		t.Fatalf("unstartedprog: %v; its dump shows no unstarted goroutine:\n%s", err, out)
	}
	rep := analyseDumps(t, true, out)
	if s := suspectAt(rep, "main.watch"); s != nil {
		t.Errorf("the watchers are a suspect: %s %+v", s.Verdict, s.Evidence)
	}
	s := suspectAt(rep, "main.(*watcher).run")
	if s == nil {
		t.Fatalf("the sender behind the closed gate is no suspect: %+v", rep.Suspects)
	}
	for _, e := range s.Evidence {
		if e.Kind == "all-asleep" {
			t.Errorf("all-asleep claimed while the unstarted goroutine can run: %s", e.Detail)
		}
	}
	folded := int64(0)
	for _, c := range s.Consequences {
		if c.Location == "main.watch" {
			folded += c.Count
		}
	}
	if folded != 1 {
		t.Errorf("watchers folded under the stuck sender: %d, want 1 (the other's sender has yet to run): %+v", folded, s.Consequences)
	}
}
