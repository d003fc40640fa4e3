package analysis_test

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/leakscope/leakscope/analysis"
)

var boundProg = &testProg{name: "boundprog"}

// boundLine is the bound's claim in a suspect's evidence.
var boundLine = regexp.MustCompile(`at most (\d+) of the (\d+) .* these (\d+) goroutines wait on .*: at least (\d+) of the \d+ stay parked for good`)

// TestBoundedWakers runs boundprog: 40 controllers' Cond waiters, of
// which 3 controllers still signal their own two queues. Every waiter's
// Cond is of one class a running signaller releases, so without a
// bound all would be wakeable; read as Go, each signaller reaches only
// its own controller's queues (fields only the composite literal sets),
// so most waiters are stuck, and the claim never exceeds the truth: at
// most the 74 workers whose controller has no signaller. With every
// controller signalling, the bound cannot hold and no one is stuck.
func TestBoundedWakers(t *testing.T) {
	const loc, live, workers = "main.(*queue).get", 3, 80
	bin := boundProg.build(t)
	rep := analyseDumps(t, true, startProg(t, bin, strconv.Itoa(live)).dump(t))
	s := suspectAt(rep, loc)
	if s == nil {
		t.Fatalf("no suspect at %s with %d of 40 signallers running; look-alikes: %+v", loc, live, rep.LookAlikes)
	}
	m := evidenceMatch(s, "unreachable", boundLine)
	if m == nil {
		t.Fatalf("the suspect's evidence states no bound: %+v", s.Evidence)
	}
	reach, waiters, stuck := atoi(t, m[1]), atoi(t, m[3]), atoi(t, m[4])
	if truth := workers - 2*live; stuck > truth || stuck < waiters-3*live || waiters < truth {
		t.Errorf("bound: at least %d of %d waiters stuck, %d objects reached by %d signallers; truth %d stuck of %d", stuck, waiters, reach, live, truth, workers)
	}
	all := analyseDumps(t, true, startProg(t, bin, "40").dump(t))
	if s := suspectAt(all, loc); s != nil {
		t.Errorf("every controller signals, yet %s is a suspect: %+v", loc, s.Evidence)
	}
}

// evidenceMatch is re's match in the suspect's first evidence of kind
// that has one.
func evidenceMatch(s *analysis.Suspect, kind string, re *regexp.Regexp) []string {
	for _, e := range s.Evidence {
		if m := re.FindStringSubmatch(e.Detail); e.Kind == kind && m != nil {
			return m
		}
	}
	return nil
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
