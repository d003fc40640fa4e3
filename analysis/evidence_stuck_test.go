package analysis_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/report"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/dump"
	"github.com/leakscope/leakscope/ingest/srclines"
)

var (
	stuckProg     = &testProg{name: "stuckprog"}
	instancesProg = &testProg{name: "instancesprog"}
)

// buildStuckProg builds testdata/stuckprog once per test binary.
func buildStuckProg(t *testing.T) string { return stuckProg.build(t) }

// stuckRun is one running stuckprog.
type stuckRun struct {
	cmd    *exec.Cmd
	addr   string
	stderr *bufio.Reader
	head   bytes.Buffer
}

func startStuckProg(t *testing.T, mode string) *stuckRun {
	t.Helper()
	return startProg(t, buildStuckProg(t), mode)
}

// startProg starts a test program that prints "ADDR host:port" and
// "READY" to stderr, and waits for READY.
func startProg(t *testing.T, bin string, args ...string) *stuckRun {
	t.Helper()
	cmd := exec.Command(bin, args...)
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &stuckRun{cmd: cmd, stderr: bufio.NewReader(pr)}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for {
		line, err := r.stderr.ReadString('\n')
		r.head.WriteString(line)
		if err != nil {
			t.Fatalf("%s %v ended before READY: %v\n%s", filepath.Base(bin), args, err, r.head.Bytes())
		}
		if a, ok := strings.CutPrefix(strings.TrimSpace(line), "ADDR "); ok {
			r.addr = a
		}
		if line == "READY\n" {
			return r
		}
	}
}

// dump fetches a debug=2 goroutine dump.
func (r *stuckRun) dump(t *testing.T) []byte {
	t.Helper()
	return fetchDump(t, r.addr)
}

// traceback sends SIGQUIT and returns what the runtime printed.
func (r *stuckRun) traceback(t *testing.T) []byte {
	t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.stderr)
	r.cmd.Wait()
	return b
}

// stamped is one input with the time it was taken.
type stamped struct {
	name string
	data []byte
	at   time.Time
}

// analyseInputs ingests dumps and tracebacks into a fresh bundle, as
// leakscope ingest does, and analyses it.
func analyseInputs(t *testing.T, inputs ...stamped) *analysis.Report {
	return analyseWith(t, analysis.Options{}, inputs...)
}

func analyseWith(t *testing.T, opts analysis.Options, inputs ...stamped) *analysis.Report {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b := ingestInputs(t, mem, inputs...)
	rep, err := analysis.Analyze(b, mem, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// ingestInputs ingests dumps and tracebacks into a fresh bundle, with the
// source as leakscope ingest keeps it, and opens it.
func ingestInputs(t *testing.T, mem memory.Allocator, inputs ...stamped) *bundle.Bundle {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "b.lsb")
	w, err := bundle.Create(dir, bundle.NewManifest("stuck", "test"), mem)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range inputs {
		a := &bundle.Artifact{Name: in.name, Time: in.at}
		if err := dump.Ingest(w, bytes.NewReader(in.data), a); err != nil {
			t.Fatal(err)
		}
		w.Update(func(m *bundle.Manifest) { m.Artifacts = append(m.Artifacts, *a) })
	}
	// The source as leakscope ingest keeps it: the wait-for reasoning
	// reads a waiting function's text (a ticker, signal.Notify) from it.
	if _, err := srclines.Snapshot(w, mem, srclines.Options{Source: "ingest"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stuckWant is a goroutine group a stuck verdict must name.
type stuckWant struct {
	location, state, pattern string
}

var stuckWants = []stuckWant{
	{"main.transfer", "sync.Mutex.Lock", "lock-order-cycle"},
	{"main.registerLocked", "sync.Mutex.Lock", "double-lock"},
	{"main.(*config).lookup", "sync.RWMutex.RLock", "recursive-rlock"},
	{"main.(*config).reload", "sync.RWMutex.Lock", "recursive-rlock"},
	{"main.syncAll", "sync.WaitGroup.Wait", "waitgroup-never-done"},
	{"main.produce", "chan send", "chan-send-no-receiver"},
	{"main.(*latch).await", "sync.Cond.Wait", "cond-never-signalled"},
	{"main.(*bus).publish", "chan send (nil chan)", "chan-send-nil"},
	{"main.serveForever", "select (no cases)", "select-no-cases"},
}

// checkStuck checks a report of stuckprog's stuck mode: every planted
// group named with its pattern and a stuck verdict, the WaitGroup waiter
// over the stuck producers folded under them, nothing else reported.
func checkStuck(t *testing.T, rep *analysis.Report, form string) {
	t.Helper()
	got := map[string]analysis.Suspect{}
	for _, s := range rep.Suspects {
		got[s.Location+" "+s.State] = s
	}
	for _, w := range stuckWants {
		s, ok := got[w.location+" "+w.state]
		if !ok {
			t.Errorf("%s: %s [%s] not reported", form, w.location, w.state)
			continue
		}
		delete(got, w.location+" "+w.state)
		if s.Pattern != w.pattern || s.Verdict != "stuck" {
			t.Errorf("%s: %s: pattern %q verdict %q, want %q stuck (evidence %v)", form, w.location, s.Pattern, s.Verdict, w.pattern, s.Evidence)
		}
	}
	for k, s := range got {
		t.Errorf("%s: unexpected suspect %s %s (%.0f): %v", form, k, s.Pattern, s.Score, s.Evidence)
	}
	for _, s := range rep.Suspects {
		if s.Location != "main.produce" {
			continue
		}
		folded := false
		for _, c := range s.Consequences {
			folded = folded || c.Location == "main.fanOut"
		}
		if !folded {
			t.Errorf("%s: main.fanOut, waiting for the stuck producers, is not among their consequences %+v", form, s.Consequences)
		}
	}
}

// TestStuckFromTwoDumps runs a program whose goroutines get stuck in the
// classic ways and names each from two dumps a second apart, and from
// one.
func TestStuckFromTwoDumps(t *testing.T) {
	r := startStuckProg(t, "stuck")
	d1 := stamped{"raw/dump-1.txt", r.dump(t), time.Now()}
	time.Sleep(time.Second)
	d2 := stamped{"raw/dump-2.txt", r.dump(t), time.Now()}
	checkStuck(t, analyseInputs(t, d1, d2), "two dumps")
	checkStuck(t, analyseInputs(t, d2), "one dump")
}

// TestStuckFromTraceback names them from one SIGQUIT traceback, where
// the runtime's frames show the channels and semaphores waited on.
func TestStuckFromTraceback(t *testing.T) {
	r := startStuckProg(t, "stuck")
	tb := r.traceback(t)
	if !bytes.Contains(tb, []byte("SIGQUIT")) {
		t.Fatalf("no traceback:\n%s", tb)
	}
	rep := analyseInputs(t, stamped{"raw/traceback.txt", tb, time.Now()})
	checkStuck(t, rep, "traceback")
	// The report a user reads: each stuck group with its pattern and what
	// it waits on, and what to capture next.
	var md bytes.Buffer
	if err := report.Markdown(&md, rep, report.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"lock-order-cycle", "recursive-rlock", "double-lock", "**Verdict:** stuck", "**Waits on:** `0x",
		"**Waiting for it (folded here):** `main.fanOut`", "One more input would add", "a second dump 10 s later", "goroutineleak profile"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the traceback's report lacks %q", want)
		}
	}
	// The lock-order cycle names both locks and the cycle.
	for _, s := range rep.Suspects {
		if s.Location != "main.transfer" {
			continue
		}
		cycle := false
		for _, e := range s.Evidence {
			cycle = cycle || e.Kind == "wait-cycle" && e.Weight > 0
		}
		if !cycle || len(s.WaitsOn) < 2 {
			t.Errorf("main.transfer: waits on %v, evidence %v; want both locks and the wait-for cycle", s.WaitsOn, s.Evidence)
		}
	}
	if rep.Inputs == nil || !rep.Inputs.Traceback || rep.Inputs.Snapshots != 1 {
		t.Errorf("inputs %+v, want one snapshot from a traceback", rep.Inputs)
	}
}

// TestHealthyLookAlikesSilent checks that idle workers on a channel main
// owns, queue workers in sync.Cond.Wait fed by a ticker loop and a
// sleeping janitor give no suspect, from two dumps and from a traceback.
func TestHealthyLookAlikesSilent(t *testing.T) {
	r := startStuckProg(t, "healthy")
	d1 := stamped{"raw/dump-1.txt", r.dump(t), time.Now()}
	time.Sleep(time.Second)
	d2 := stamped{"raw/dump-2.txt", r.dump(t), time.Now()}
	tb := stamped{"raw/traceback.txt", r.traceback(t), time.Now()}
	for form, in := range map[string][]stamped{"two dumps": {d1, d2}, "one dump": {d2}, "traceback": {tb}} {
		rep := analyseInputs(t, in...)
		for _, s := range rep.Suspects {
			t.Errorf("%s: healthy program has suspect %s %s@%s [%s] (%.0f): %v", form, s.ID, s.Pattern, s.Location, s.State, s.Score, s.Evidence)
		}
		if rep.Bundle.GoroutineRows == 0 {
			t.Errorf("%s: no goroutines read", form)
		}
		// Each look-alike is recognised for what it is.
		// The queue's waiters: their feeder holds the queue, or the
		// Cond's tickets show it woken.
		for loc, kind := range map[string]string{"main.worker": "idle-pool", "main.(*queue).get": "wakeable progress"} {
			found := false
			for _, l := range rep.LookAlikes {
				found = found || l.Location == loc && slices.Contains(strings.Fields(kind), l.Kind) && l.Count > 0
			}
			if !found {
				t.Errorf("%s: %s is not listed as a look-alike (%s): %+v", form, loc, kind, rep.LookAlikes)
			}
		}
	}
}

// TestContendedLockNotStuck runs a program whose calls queue on a global
// lock faster than its holder serves them (each holds it across a 20 ms
// write): the queue grows while the waiters change, and neither its
// growth nor its waiting may read as a stuck lock. From two dumps a
// second apart (and from three) the lock is not a suspect, and the
// report lists it as a contended look-alike.
func TestContendedLockNotStuck(t *testing.T) {
	r := startStuckProg(t, "contended")
	var ds []stamped
	for i := range 3 {
		if i > 0 {
			time.Sleep(time.Second)
		}
		ds = append(ds, stamped{fmt.Sprintf("raw/dump-%d.txt", i+1), r.dump(t), time.Now()})
	}
	for form, in := range map[string][]stamped{"two dumps": ds[1:], "three dumps": ds} {
		rep := analyseInputs(t, in...)
		for _, s := range rep.Suspects {
			t.Errorf("%s: contended lock gives suspect %s %s@%s [%s] (%.0f, %s): %v", form, s.ID, s.Pattern, s.Location, s.State, s.Score, s.Verdict, s.Evidence)
		}
		found := false
		for _, l := range rep.LookAlikes {
			found = found || l.Location == "main.record" && l.Kind == "contended" && l.Count > 0
		}
		if !found {
			t.Errorf("%s: the queue on the lock is not listed as contended: %+v", form, rep.LookAlikes)
		}
	}
}

// TestStuckFromOwnSIGQUIT names the stuck groups from the traceback the
// program prints when it sends itself SIGQUIT: the sending goroutine is
// recognised as the one taking the dump and is not counted as able to
// run.
func TestStuckFromOwnSIGQUIT(t *testing.T) {
	bin := buildStuckProg(t)
	var tb []byte
	// The signal is delivered while the sender returns from its call:
	// the traceback shows it in the call or just after it. Run until it
	// shows it in the call (the case the dumping rule reads), at most
	// 20 times.
	for try := 0; try < 20; try++ {
		cmd := exec.Command(bin, "stuck", "selfquit")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Run() // exits with status 2 after the traceback
		if !bytes.Contains(stderr.Bytes(), []byte("main.quitSelf")) {
			t.Fatalf("no traceback with the sender:\n%s", stderr.Bytes())
		}
		tb = stderr.Bytes()
		if bytes.Contains(tb, []byte("os.(*Process).Signal")) {
			break
		}
	}
	rep := analyseInputs(t, stamped{"raw/traceback.txt", tb, time.Now()})
	checkStuck(t, rep, "own SIGQUIT")
	if !bytes.Contains(tb, []byte("os.(*Process).Signal")) {
		t.Fatalf("in 20 runs the traceback never showed the sender inside its signal call; last:\n%s", tb)
	}
	asleep := false
	for _, s := range rep.Suspects {
		for _, e := range s.Evidence {
			asleep = asleep || e.Kind == "all-asleep" && strings.Contains(e.Detail, "sends the process its SIGQUIT")
		}
	}
	if !asleep {
		t.Error("no all-asleep evidence naming the goroutine that sent SIGQUIT")
	}
}

// TestCycleKinds names each kind of wait-for cycle by its own pattern,
// from a dump and from a traceback: a lock held across a send whose only
// receiver waits for the lock, and a read lock held across a Cond wait
// whose signaller waits behind a writer. Neither is a lock "never
// released", and the sender is no separate send without a receiver.
func TestCycleKinds(t *testing.T) {
	r := startStuckProg(t, "lockkinds")
	d := stamped{"raw/dump-1.txt", r.dump(t), time.Now()}
	tb := stamped{"raw/traceback.txt", r.traceback(t), time.Now()}
	want := map[string]string{
		"main.(*mailbox).post": "lock-held-across-channel", "main.(*mailbox).drain": "lock-held-across-channel",
		"main.(*table).awaitReady": "lock-held-across-wait", "main.(*table).rebuild": "lock-held-across-wait", "main.(*table).markReady": "lock-held-across-wait",
	}
	for form, in := range map[string]stamped{"dump": d, "traceback": tb} {
		rep := analyseInputs(t, in)
		got := map[string]string{}
		for _, s := range rep.Suspects {
			got[s.Location] = s.Pattern
			if w, ok := want[s.Location]; !ok {
				t.Errorf("%s: unexpected suspect %s %s: %v", form, s.Location, s.Pattern, s.Evidence)
			} else if s.Pattern != w || s.Verdict != "stuck" {
				t.Errorf("%s: %s is %s (%s), want %s stuck", form, s.Location, s.Pattern, s.Verdict, w)
			}
		}
		for _, loc := range []string{"main.(*mailbox).post", "main.(*table).awaitReady"} {
			if got[loc] == "" {
				t.Errorf("%s: %s not reported (%v)", form, loc, got)
			}
		}
	}
}

// TestLockHeldWhileBlocked: a lock held across a singleflight call whose
// callback blocks on a send nobody receives is held while blocked, not a
// cycle: one suspect, the send in the holder's callback (never main.main)
// with pattern lock-held-while-blocked,
// with the lookups queued on the lock folded under it.
func TestLockHeldWhileBlocked(t *testing.T) {
	r := startStuckProg(t, "callback")
	d := stamped{"raw/dump-1.txt", r.dump(t), time.Now()}
	tb := stamped{"raw/traceback.txt", r.traceback(t), time.Now()}
	for form, in := range map[string]stamped{"dump": d, "traceback": tb} {
		rep := analyseInputs(t, in)
		if len(rep.Suspects) != 1 {
			for _, s := range rep.Suspects {
				t.Logf("%s %s %s", s.Location, s.Pattern, s.Cycle)
			}
			t.Fatalf("%s: %d suspects, want the holder's send alone", form, len(rep.Suspects))
		}
		s := rep.Suspects[0]
		if s.Location != "main.(*tokenCache).refresh.func1" || s.Pattern != "lock-held-while-blocked" || len(s.Cycle) > 0 {
			t.Errorf("%s: suspect %s %s cycle %v, want the refresh callback's send, no cycle", form, s.Location, s.Pattern, s.Cycle)
		}
		folded := false
		for _, c := range s.Consequences {
			folded = folded || c.Location == "main.(*tokenCache).lookup" && strings.Contains(c.Relation, "held while blocked")
		}
		if !folded {
			t.Errorf("%s: the lookups are not folded as waiting for a lock held while blocked: %+v", form, s.Consequences)
		}
	}
}

// TestInstancesApart: a goroutine that can run releases only the
// instance it holds. A handler's goroutine waiting in its current call
// can receive only from that call's channel, not from the channels of
// the calls whose workers it left blocked. A signaller started through a helper (after) whose
// creator returned signals its own Cond, not the Cond of a waiter
// started the same way (the program shows after's callers hand it only
// what their own goroutine made); a holder whose receiver's lock is at
// another address than the one a timer callback waits on cannot release
// it. Both waiters are stuck, the signaller and the holder are not.
func TestInstancesApart(t *testing.T) {
	r := startProg(t, instancesProg.build(t))
	in := stamped{"raw/dump-1.txt", r.dump(t), time.Now()}
	rep := analyseInputs(t, in)
	got := map[string]bool{}
	for _, s := range rep.Suspects {
		got[s.Location] = true
		t.Logf("suspect %s %s %s", s.Location, s.State, s.Pattern)
	}
	for _, want := range []string{"main.lostSignal.func1", "main.plant.func1", "main.work"} {
		if !got[want] {
			t.Errorf("no suspect at %s", want)
		}
	}
	for _, not := range []string{"main.signaller.func1", "main.(*box).keep"} {
		if got[not] {
			t.Errorf("a suspect at %s, which can run", not)
		}
	}
}
