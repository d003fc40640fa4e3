package analysis_test

import (
	"bytes"
	"os/exec"
	"testing"
)

var asleepProg = &testProg{name: "asleepprog"}

// asleepCrash runs testdata/asleepprog and returns the traceback the
// runtime prints when it finds every goroutine asleep.
func asleepCrash(t *testing.T) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(asleepProg.build(t))
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || !bytes.Contains(stderr.Bytes(), []byte("all goroutines are asleep")) {
		t.Fatalf("asleepprog: %v; want the runtime's deadlock crash, got:\n%s", err, stderr.Bytes())
	}
	return stderr.Bytes()
}

// TestAllAsleepWithoutSource: a select whose source is absent cannot be
// told from a timer loop by the dump alone, but in the runtime's own
// deadlock crash no timer is pending, so it is stuck, on that basis. The
// same goroutines printed by a SIGQUIT instead leave it undecided.
func TestAllAsleepWithoutSource(t *testing.T) {
	crash := asleepCrash(t)
	rep := analyseDumps(t, false, crash)
	s := suspectAt(rep, "main.waitBoth")
	if s == nil || s.Verdict != "stuck" {
		t.Fatalf("main.waitBoth without source in the all-asleep crash: %+v; suspects %+v", s, rep.Suspects)
	}
	basis := false
	for _, e := range s.Evidence {
		basis = basis || e.Kind == "all-asleep" && bytes.Contains([]byte(e.Detail), []byte("the runtime itself stopped the program"))
	}
	if !basis {
		t.Errorf("main.waitBoth's evidence does not rest on the runtime's crash: %+v", s.Evidence)
	}
	quit := bytes.Replace(crash, []byte("fatal error: all goroutines are asleep - deadlock!"), []byte("SIGQUIT: quit"), 1)
	if bytes.Equal(quit, crash) {
		t.Fatal("the crash has no fatal error line to replace")
	}
	rep = analyseDumps(t, false, quit)
	if s := suspectAt(rep, "main.waitBoth"); s != nil && s.Verdict == "stuck" {
		t.Errorf("main.waitBoth stuck without source or the runtime's word: %+v", s.Evidence)
	}
	if rep.Source == nil || rep.Source.UndecidedGroups == 0 {
		t.Errorf("source coverage does not count main.waitBoth as undecided: %+v", rep.Source)
	}
}
