package analysis_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/dump"
	"github.com/leakscope/leakscope/ingest/srclines"
)

var timerProg = &testProg{name: "timerprog"}

// runTimerProg builds and starts testdata/timerprog and returns its pprof
// address once every goroutine is in place.
func runTimerProg(t *testing.T, mode string) string {
	t.Helper()
	bin := timerProg.build(t)
	cmd := exec.Command(bin, mode)
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	r := bufio.NewReader(pr)
	addr := ""
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("timerprog ended before READY: %v", err)
		}
		if a, ok := strings.CutPrefix(strings.TrimSpace(line), "ADDR "); ok {
			addr = a
		}
		if line == "READY\n" {
			go io.Copy(io.Discard, r)
			return addr
		}
	}
}

// fetchDump fetches a debug=2 goroutine dump from the pprof server at
// addr.
func fetchDump(t *testing.T, addr string) []byte {
	t.Helper()
	return httpGet(t, "http://"+addr+"/debug/pprof/goroutine?debug=2")
}

// httpGet GETs url and returns its body; an error or a status other
// than 200 fails the test.
func httpGet(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %v (status %d)", url, err, resp.StatusCode)
	}
	return b
}

// settledDump fetches dumps until each of want (a goroutine header's
// state followed by its leaf function of the program, "[select]:\nmain.waitBoth")
// is in one, so that a loaded machine's late goroutines are in place.
func settledDump(t *testing.T, addr string, want ...string) []byte {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		d := fetchDump(t, addr)
		ok := true
		for _, w := range want {
			ok = ok && bytes.Contains(d, []byte(w))
		}
		if ok {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("no dump with %q in 2 minutes; last:\n%s", want, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// analyseDumps ingests dumps into a fresh bundle, keeping the frames'
// source as leakscope ingest does when keep is set, and analyses it.
func analyseDumps(t *testing.T, keep bool, dumps ...[]byte) *analysis.Report {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := filepath.Join(t.TempDir(), "b.lsb")
	w, err := bundle.Create(dir, bundle.NewManifest("timer", "test"), mem)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	for i, d := range dumps {
		a := &bundle.Artifact{Name: fmt.Sprintf("raw/dump-%d.txt", i), Time: at.Add(time.Duration(i) * time.Second)}
		if err := dump.Ingest(w, bytes.NewReader(d), a); err != nil {
			t.Fatal(err)
		}
		w.Update(func(m *bundle.Manifest) { m.Artifacts = append(m.Artifacts, *a) })
	}
	if keep {
		if _, err := srclines.Snapshot(w, mem, srclines.Options{Source: "ingest"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Analyze(b, mem, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func suspectAt(rep *analysis.Report, location string) *analysis.Suspect {
	for i := range rep.Suspects {
		if rep.Suspects[i].Location == location {
			return &rep.Suspects[i]
		}
	}
	return nil
}

// timerLive are timerprog's goroutines that a timer or a signal wakes;
// timerLiveDump and timerStuck how each mode's goroutines show in a dump
// once in place.
var (
	timerLive     = []string{"main.retry", "main.waitSignal", "main.every"}
	timerLiveDump = []string{"[chan receive]:\nmain.main(", "[select]:\nmain.retry(", "[chan receive]:\nmain.waitSignal(", "[select]:\nmain.every("}
	timerStuck    = []string{"[chan receive]:\nmain.main(", "[select]:\nmain.waitBoth(", "[chan receive]:\nmain.(*retrier).reset("}
)

// TestTimerCasesFromSource: with the source kept, a select is ended by a
// timer only when one of its own cases receives from one: the retry loop
// and the ticker loop are live, the signal wait idle, while the select
// in a function that uses time.After elsewhere, and the receive from a
// stopped timer's channel, are stuck.
func TestTimerCasesFromSource(t *testing.T) {
	liveTest(t, "builds and runs a Go program")
	rep := analyseDumps(t, true, settledDump(t, runTimerProg(t, "stuck"), timerStuck...))
	for loc, pattern := range map[string]string{"main.waitBoth": "select-without-cancel", "main.(*retrier).reset": "timer-not-stopped"} {
		s := suspectAt(rep, loc)
		if s == nil || s.Verdict != "stuck" || s.Pattern != pattern {
			t.Errorf("%s: %+v, want stuck %s; look-alikes %+v", loc, s, pattern, rep.LookAlikes)
		}
	}
	rep = analyseDumps(t, true, settledDump(t, runTimerProg(t, "live"), timerLiveDump...))
	for _, loc := range timerLive {
		if s := suspectAt(rep, loc); s != nil {
			t.Errorf("%s reported: %s %s %+v", loc, s.Verdict, s.Pattern, s.Evidence)
		}
	}
}

// TestTimerVerdictWithoutSource: without the source no select or receive
// of the program's code is judged stuck on evidence the source could
// contradict. The live retry loop, the ticker loop and the signal wait
// stay silent, as with the source; the stuck ones, which only their
// statements tell from live ones in a dump, are not called stuck either,
// and the report says what the missing source cost.
func TestTimerVerdictWithoutSource(t *testing.T) {
	d := settledDump(t, runTimerProg(t, "live"), timerLiveDump...)
	rep := analyseDumps(t, false, d)
	for _, loc := range timerLive {
		if s := suspectAt(rep, loc); s != nil {
			t.Errorf("without source %s reported: %s %s %+v", loc, s.Verdict, s.Pattern, s.Evidence)
		}
	}
	d = settledDump(t, runTimerProg(t, "stuck"), timerStuck...)
	rep = analyseDumps(t, false, d)
	for _, s := range rep.Suspects {
		for _, e := range s.Evidence {
			if e.Kind == "all-asleep" {
				t.Errorf("%s: all-asleep evidence without source: %+v", s.Location, e)
			}
		}
	}
	for _, loc := range []string{"main.waitBoth", "main.(*retrier).reset"} {
		if s := suspectAt(rep, loc); s != nil && s.Verdict == "stuck" {
			t.Errorf("without source %s is stuck: %+v", loc, s.Evidence)
		}
		found := false
		for _, l := range rep.LookAlikes {
			found = found || l.Location == loc && l.Kind == "source-absent" && strings.Contains(l.Reason, "cannot rule out a timer case")
		}
		if !found {
			t.Errorf("%s is not listed as undecided for want of source: %+v", loc, rep.LookAlikes)
		}
	}
	c := rep.Source
	if c == nil || c.UndecidedGroups != 2 || c.Kept != 0 || c.MissingCount == 0 || c.MissingCount != c.Functions {
		t.Fatalf("source coverage %+v", c)
	}
	warned := false
	for _, w := range rep.Warnings {
		warned = warned || strings.HasPrefix(w, "source missing:") && strings.Contains(w, "2 parked groups") && strings.Contains(w, "main.waitBoth")
	}
	if !warned {
		t.Errorf("no warning says the source was missing and what it cost: %q", rep.Warnings)
	}
	if c := analyseDumps(t, true, d).Source; c == nil || c.MissingCount != 0 || c.UndecidedGroups != 0 || c.Kept != c.Functions {
		t.Errorf("with source: coverage %+v", c)
	}
}
