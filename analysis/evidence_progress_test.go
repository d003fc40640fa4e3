package analysis_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// get fetches a path of the running program and fails the test on error.
func (r *stuckRun) get(t *testing.T, path string) {
	t.Helper()
	resp, err := http.Get("http://" + r.addr + path)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%s: status %d", path, resp.StatusCode)
	}
}

// TestFedCondNotStuck runs five queue workers in sync.Cond.Wait fed every
// 100 ms by a closure goroutine (whose frames show no pointer to the
// queue): from one dump, two dumps, one dump after the Cond was waited
// on and signalled hundreds of times, and a SIGQUIT traceback, no group
// is stuck and none is a suspect.
func TestFedCondNotStuck(t *testing.T) {
	r := startStuckProg(t, "fedcond")
	d1 := stamped{"raw/dump-1.txt", r.dump(t), time.Now()}
	time.Sleep(time.Second)
	d2 := stamped{"raw/dump-2.txt", r.dump(t), time.Now()}
	r.get(t, "/burst")
	d3 := stamped{"raw/dump-3.txt", r.dump(t), time.Now()}
	tb := stamped{"raw/traceback.txt", r.traceback(t), time.Now()}
	forms := []struct {
		name string
		in   []stamped
	}{{"one dump", []stamped{d1}}, {"two dumps", []stamped{d1, d2}}, {"after a burst", []stamped{d3}}, {"traceback", []stamped{tb}}}
	for _, f := range forms {
		checkFedCond(t, f.name, f.in)
	}
	// With tickets that prove nothing (the first five Waits), the feeder
	// is still a possible holder: a closure of the function that started
	// the workers, able to run.
	n := 0
	low := stamped{"raw/dump-low.txt", ticketRe.ReplaceAllFunc(d1.data, func(m []byte) []byte {
		n++
		return ticketRe.ReplaceAll(m, []byte(fmt.Sprintf("${1}%#x)", n-1)))
	}), d1.at}
	rep := analyseInputs(t, low)
	for _, s := range rep.Suspects {
		t.Errorf("low tickets: suspect %s %s@%s: %v", s.ID, s.Pattern, s.Location, s.Evidence)
	}
	found := false
	for _, l := range rep.LookAlikes {
		found = found || l.Location == "main.(*queue).get" && l.Kind == "possible-holder" && strings.Contains(l.Reason, "main.fedcond.func1")
	}
	if !found {
		t.Errorf("low tickets: the feeder is not named as a possible holder: %+v", rep.LookAlikes)
	}
}

// ticketRe matches a Cond waiter's notifyListWait frame up to its ticket.
var ticketRe = regexp.MustCompile(`(sync\.runtime_notifyListWait\(0x[0-9a-f]+, )0x[0-9a-f]+\)`)

// checkFedCond requires a report of the fed Cond without suspects and
// with the waiters let go by what the runtime's counters show.
func checkFedCond(t *testing.T, name string, in []stamped) {
	t.Helper()
	rep := analyseInputs(t, in...)
	for _, s := range rep.Suspects {
		t.Errorf("%s: fed Cond gives suspect %s %s@%s [%s] (%.0f, %s): %v", name, s.ID, s.Pattern, s.Location, s.State, s.Score, s.Verdict, s.Evidence)
	}
	// The runtime's own counters carry it: the tickets moved between the
	// dumps, or one snapshot's tickets lie far above the five waiters.
	basis := "ended by Signal or Broadcast"
	if len(in) == 2 {
		basis = "took Cond ticket"
	}
	found := false
	for _, l := range rep.LookAlikes {
		found = found || l.Location == "main.(*queue).get" && l.Count > 0 && l.Kind == "progress" && strings.Contains(l.Reason, basis)
	}
	if !found {
		t.Errorf("%s: the Cond's waiters are not listed as look-alikes by %q: %+v", name, basis, rep.LookAlikes)
	}
}
