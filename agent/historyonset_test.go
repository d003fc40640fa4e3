package agent

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// lateLeak is testdata/lateleak running: healthy until leak is called.
type lateLeak struct {
	cmd   *exec.Cmd
	url   string
	lines *bufio.Reader
}

func startLateLeak(t *testing.T, args ...string) *lateLeak {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lateleak")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join("testdata", "lateleak")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build lateleak: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append([]string{"-rate", "20"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	l := &lateLeak{cmd: cmd, lines: bufio.NewReader(out)}
	line, err := l.lines.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening on ") {
		t.Fatalf("lateleak: %q (%v)", line, err)
	}
	l.url = strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	return l
}

// leak starts the leak and returns when it began, as the program says.
func (l *lateLeak) leak(t *testing.T) time.Time {
	t.Helper()
	if err := l.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	line, err := l.lines.ReadString('\n')
	t0, perr := time.Parse(time.RFC3339Nano, strings.TrimSpace(strings.TrimPrefix(line, "leaking from ")))
	if err != nil || perr != nil {
		t.Fatalf("lateleak: %q (%v, %v)", line, err, perr)
	}
	go io.Copy(io.Discard, l.lines)
	return t0
}

// TestHistoryOnset watches a program that starts leaking at a known time
// T0, lets the history record the leak's first seconds, and then has an
// alert trigger a short capture: the report's onset rests on the history,
// its bounds contain T0 and are one history interval apart, and the
// growth fit and first sighting come from the history, before the capture
// began. The first answer, written after the first dump, already names
// the leak with its history onset.
func TestHistoryOnset(t *testing.T) {
	liveTest(t)
	l := startLateLeak(t)
	a, _ := runAgentUntil(t, Config{Select: Selection{PIDs: []int{l.cmd.Process.Pid}}, WatchEvery: time.Second,
		SpoolDir: t.TempDir(), History: HistoryConfig{Keep: time.Hour}})
	waitFor(t, a, "the program to be watched", func(st status) bool { return len(st.Targets) == 1 })
	proc, err := readProcess(l.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	waitHistory(t, a, proc.key(), 3)
	t0 := l.leak(t)
	n0 := countProfile(a.history.Files(proc.key(), time.Now()), "goroutine")
	waitHistory(t, a, proc.key(), n0+6)
	e := alertCapture(t, a, l.cmd.Process.Pid)
	checkHistoryOnset(t, a, e, a.spool.BundlePath(e), t0)
}

// TestHistoryOnsetRule is TestHistoryOnset with the agent's own growth
// rule triggering the capture, once the growth has lasted 8 s, and the
// agent uploading to a workbench: a preliminary capture naming the leak
// is listed there before the final one, which holds the history onset.
func TestHistoryOnsetRule(t *testing.T) {
	liveTest(t)
	l := startLateLeak(t)
	wb := newWorkbench(t)
	rule := Rule{Window: 20 * time.Second, GoroutinesPerMin: 120, For: 8 * time.Second, MinPoints: 3}
	a, _ := runAgentUntil(t, Config{Select: Selection{PIDs: []int{l.cmd.Process.Pid}}, WatchEvery: time.Second, Rule: rule,
		SpoolDir: t.TempDir(), History: HistoryConfig{Keep: time.Hour}, UploadTo: wb.srv.URL})
	waitFor(t, a, "the program to be watched", func(st status) bool { return len(st.Targets) == 1 })
	proc, err := readProcess(l.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	waitHistory(t, a, proc.key(), 3)
	t0 := l.leak(t)
	prelim, final := watchList(t, a, wb, "", "main.worker")
	st := waitFor(t, a, "the rule's capture uploaded", func(st status) bool { return uploadedEntry(st) != nil })
	e := uploadedEntry(st)
	if !strings.HasPrefix(e.Trigger, "growth rule") {
		t.Errorf("capture triggered by %q, want the growth rule", e.Trigger)
	}
	t.Logf("T0 %s; triggered %s (%v after T0); preliminary capture listed %v after the trigger, final %v after", t0.Format(time.TimeOnly+".000"),
		e.Created.Format(time.TimeOnly+".000"), e.Created.Sub(t0).Round(10*time.Millisecond), prelim.Sub(e.Created).Round(10*time.Millisecond), final.Sub(e.Created).Round(10*time.Millisecond))
	if !prelim.Before(final) || e.PreliminaryID != e.UploadID {
		t.Errorf("preliminary capture %s listed at %v, final %s at %v: want the preliminary one first, replaced", e.PreliminaryID, prelim, e.UploadID, final)
	}
	checkHistoryOnset(t, a, e, filepath.Join(wb.store.Dir(), e.UploadID), t0)
}

// checkHistoryOnset analyses entry e's bundle, in dir, and checks that the
// leak's onset and growth come from the history and bound T0 = t0.
func checkHistoryOnset(t *testing.T, a *Agent, e *Entry, dir string, t0 time.Time) {
	t.Helper()
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Analyze(b, memory.DefaultAllocator, analysis.Options{Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	var sus *analysis.Suspect
	for i := range rep.Suspects {
		if rep.Suspects[i].Location == "main.worker" {
			sus = &rep.Suspects[i]
			break
		}
	}
	if sus == nil {
		t.Fatalf("no suspect at main.worker: %+v", rep.Suspects)
	}
	firstDump := firstDumpTime(b.Manifest)
	o := sus.Onset
	if o == nil || o.Basis != analysis.OnsetHistory {
		t.Fatalf("onset %+v, want basis %q", o, analysis.OnsetHistory)
	}
	t.Logf("T0 %s; onset %s .. %s (%s); first dump %s", t0.Format(time.TimeOnly+".000"), o.Earliest.Format(time.TimeOnly+".000"), o.Latest.Format(time.TimeOnly+".000"), o.Detail, firstDump.Format(time.TimeOnly+".000"))
	if t0.Before(o.Earliest) || t0.After(o.Latest) {
		t.Errorf("onset bounds %v .. %v do not contain T0 %v", o.Earliest, o.Latest, t0)
	}
	if gap := historyGapAt(b.Manifest, o.Earliest); o.Latest.Sub(o.Earliest) != gap || gap == 0 {
		t.Errorf("onset bounds %v apart; the history interval there is %v", o.Latest.Sub(o.Earliest), gap)
	}
	if !strings.Contains(o.Detail, "before the capture began") {
		t.Errorf("onset detail %q does not say how long before the capture", o.Detail)
	}
	if !sus.FirstSeen.Before(firstDump) || sus.FirstSeen.Before(t0) {
		t.Errorf("first seen %v, want after T0 %v and before the first dump %v", sus.FirstSeen, t0, firstDump)
	}
	// The first answer, written after the first dump, already rests on
	// the history.
	prelim, err := os.ReadFile(a.spool.Path(e, firstAnswerFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(prelim, []byte("Preliminary")) || !bytes.Contains(prelim, []byte("main.worker")) || !bytes.Contains(prelim, []byte("absent from the agent's history")) {
		t.Errorf("preliminary report lacks the suspect or its history onset:\n%.2000s", prelim)
	}
	if bytes.Contains(prelim, []byte("growth cannot be measured")) {
		t.Errorf("preliminary report says growth cannot be measured, with the history before its dump")
	}
	var before int
	for _, p := range sus.Counts {
		if p.TS.Before(firstDump) && p.TS.After(t0) && p.Value > 0 {
			before++
		}
	}
	if before < 5 || sus.Fit.Points < before || sus.GrowthPerMin <= 0 {
		t.Errorf("%d points of the history after T0 in the counts, fit over %d points at %.1f/min; want the history in the fit", before, sus.Fit.Points, sus.GrowthPerMin)
	}
}

func firstDumpTime(m bundle.Manifest) time.Time {
	var first time.Time
	for _, a := range m.Artifacts {
		if a.Kind == bundle.SourceDump && (first.IsZero() || a.Time.Before(first)) {
			first = a.Time
		}
	}
	return first
}

// historyGapAt is the time from the history goroutine profile at ts to
// the next snapshot (history or dump).
func historyGapAt(m bundle.Manifest, ts time.Time) time.Duration {
	next := time.Time{}
	for _, a := range m.Artifacts {
		if (a.Role == bundle.RoleHistory && a.Profile == "goroutine" || a.Kind == bundle.SourceDump) && a.Time.After(ts) && (next.IsZero() || a.Time.Before(next)) {
			next = a.Time
		}
	}
	if next.IsZero() {
		return 0
	}
	return next.Sub(ts)
}

// TestHistoryShared runs the program with two creators leaking workers of
// one stack: the goroutine profiles cannot tell their members apart, so
// neither group's counts or onset take the history.
func TestHistoryShared(t *testing.T) {
	liveTest(t)
	l := startLateLeak(t, "-twin")
	a, _ := runAgentUntil(t, Config{Select: Selection{PIDs: []int{l.cmd.Process.Pid}}, WatchEvery: time.Second,
		SpoolDir: t.TempDir(), History: HistoryConfig{Keep: time.Hour}})
	waitFor(t, a, "the program to be watched", func(st status) bool { return len(st.Targets) == 1 })
	proc, err := readProcess(l.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	waitHistory(t, a, proc.key(), 3)
	l.leak(t)
	n0 := countProfile(a.history.Files(proc.key(), time.Now()), "goroutine")
	waitHistory(t, a, proc.key(), n0+4)
	e := alertCapture(t, a, l.cmd.Process.Pid)
	b, err := bundle.Open(a.spool.BundlePath(e))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Analyze(b, memory.DefaultAllocator, analysis.Options{Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	firstDump := firstDumpTime(b.Manifest)
	creators := map[string]bool{}
	for _, s := range rep.Suspects {
		if s.Location != "main.worker" {
			continue
		}
		creators[s.Creator] = true
		if s.Onset != nil && s.Onset.Basis == analysis.OnsetHistory {
			t.Errorf("%s from %s: onset basis history, from counts it cannot have", s.ID, s.Creator)
		}
		for _, p := range s.Counts {
			if p.TS.Before(firstDump) {
				t.Errorf("%s from %s: a count at %v, before the first dump", s.ID, s.Creator, p.TS)
				break
			}
		}
	}
	if !creators["main.lookup"] || !creators["main.lookupTwin"] {
		t.Errorf("suspects at main.worker created by %v, want main.lookup and main.lookupTwin", creators)
	}
}
