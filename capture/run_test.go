package capture

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/dev/bundletest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
	"github.com/leakscope/leakscope/samples"
)

// leakFunc is where timeout-send's leaked workers block.
const leakFunc = "main.(*Handler).compute"

// TestCaptureLeakySample records the timeout-send sample with every source
// and checks that the leaked goroutines show up in the dumps, the trace and
// (as root) the eBPF stream with the same goids and parents.
func TestCaptureLeakySample(t *testing.T) {
	if testing.Short() {
		t.Skip("captures a live process for 20 s")
	}
	t.Parallel()
	p := startSample(t, "timeout-send")
	b := captureLeakySample(t, p, filepath.Join(t.TempDir(), "c.lsb"))
	checkLeakyManifest(t, b, p)

	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	lb := &leakyBundle{b: b, mem: mem}
	lb.readLastDump(t)
	lb.readTraceCreations(t)

	ebpf := source(t, b.Manifest, bundle.SourceEBPF)
	if !isRoot() {
		if ebpf.Status != bundle.StatusUnavailable || ebpf.Detail == "" {
			t.Errorf("unprivileged: ebpf source %q %q, want unavailable with a reason", ebpf.Status, ebpf.Detail)
		}
		return
	}
	if ebpf.Status != bundle.StatusComplete {
		t.Fatalf("ebpf source: %s: %s", ebpf.Status, ebpf.Detail)
	}
	lb.checkEBPFCreations(t)
	var pairs int
	readRows(t, b, schema.TableClockSync, mem, func(arrow.Record, int) { pairs++ })
	if pairs < 4 {
		t.Errorf("%d clock_sync pairs, want a pair every 5 s (at least 4)", pairs)
	}
}

// captureLeakySample captures p with every source for 20 s into out,
// checks the capture ended at its duration, and opens the bundle.
func captureLeakySample(t *testing.T, p *samples.Process, out string) *bundle.Bundle {
	t.Helper()
	var log strings.Builder
	sum, err := Run(context.Background(), Options{
		PID: p.PID, Out: out, Duration: 20 * time.Second, Interval: 5 * time.Second,
		TraceWindow: 3 * time.Second, CPUWindow: 2 * time.Second,
		EBPFBudget: 1, // the probes attached throughout: the test compares their creations with the trace's
	}, &syncWriter{w: &log})
	t.Logf("progress:\n%s", log.String())
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	sum.Write(&sb)
	t.Logf("summary:\n%s", sb.String())
	if sum.Reason != EndDuration {
		t.Errorf("reason %q, want %q", sum.Reason, EndDuration)
	}
	b, err := bundle.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkLeakyManifest checks b's manifest records the target p and the
// node, has the dump, pprof and trace sources complete, and lists only
// complete artifacts whose originals are in the bundle.
func checkLeakyManifest(t *testing.T, b *bundle.Bundle, p *samples.Process) {
	t.Helper()
	m := b.Manifest
	if m.Target.PID != p.PID || m.Target.GoVersion == "" || m.Target.Exe == "" || m.Node == "" {
		t.Errorf("target/node not recorded: node %q target %+v", m.Node, m.Target)
	}
	if m.Target.URL != p.URL {
		t.Errorf("discovered URL %q, want %q", m.Target.URL, p.URL)
	}
	for _, k := range []string{bundle.SourceDump, bundle.SourcePprof, bundle.SourceTrace} {
		if s := source(t, m, k); s.Status != bundle.StatusComplete {
			t.Errorf("source %s: status %q (%s), want complete", k, s.Status, s.Detail)
		}
	}
	for _, a := range m.Artifacts {
		if a.Status != bundle.StatusComplete {
			t.Errorf("artifact %s: %s: %s", a.Name, a.Status, a.Detail)
		}
		if _, err := os.Stat(filepath.Join(b.Dir, a.Name)); err != nil {
			t.Errorf("artifact original missing: %v", err)
		}
	}
}

// leakyBundle is the captured timeout-send bundle and what the checks have
// read from it so far.
type leakyBundle struct {
	b            *bundle.Bundle
	mem          memory.Allocator
	dumped       map[int64]int64         // leaked goroutines in the last dump: goid -> creator goid
	traceCreated map[int64]traceCreation // leaked goroutines the traces saw created
}

// traceCreation is when a trace saw a goroutine created: its created_ts,
// that time as CLOCK_MONOTONIC and the slack of the conversion.
type traceCreation struct {
	ts, mono, slack int64
}

// readLastDump fills lb.dumped from the goroutines of the last dump that
// are blocked in leakFunc, and requires at least 20.
func (lb *leakyBundle) readLastDump(t *testing.T) {
	t.Helper()
	b, mem := lb.b, lb.mem
	stacks := bundletest.StackFunctions(t, b, mem)
	lb.dumped = map[int64]int64{}
	var lastSnap int64
	readRows(t, b, schema.TableGoroutines, mem, func(rec arrow.Record, i int) {
		lastSnap = max(lastSnap, i64At(col(t, rec, schema.ColSnapshotTS), i))
	})
	readRows(t, b, schema.TableGoroutines, mem, func(rec arrow.Record, i int) {
		if i64At(col(t, rec, schema.ColSnapshotTS), i) != lastSnap {
			return
		}
		if hasFunc(stacks[i64At(col(t, rec, schema.ColStackID), i)], leakFunc) {
			lb.dumped[i64At(col(t, rec, schema.ColGoid), i)] = i64At(col(t, rec, schema.ColCreatorGoid), i)
		}
	})
	if len(lb.dumped) < 20 {
		t.Fatalf("last dump holds %d goroutines blocked in %s, want at least 20", len(lb.dumped), leakFunc)
	}
}

// readTraceCreations finds the dumped leaked goroutines in the trace
// windows, checks they have the same parents there, and fills
// lb.traceCreated with when the trace saw each created.
func (lb *leakyBundle) readTraceCreations(t *testing.T) {
	t.Helper()
	var inTrace, traceMismatch int
	lb.traceCreated = map[int64]traceCreation{}
	mono := bundletest.TraceMono(t, lb.b, lb.mem)
	readRows(t, lb.b, schema.TableTraceGoroutines, lb.mem, func(rec arrow.Record, i int) {
		goid := i64At(col(t, rec, schema.ColGoid), i)
		parent := i64At(col(t, rec, schema.ColParentGoid), i)
		want, ok := lb.dumped[goid]
		if !ok || parent == 0 {
			return
		}
		created := i64At(col(t, rec, schema.ColCreatedTS), i)
		m, slack, _ := mono(created)
		lb.traceCreated[goid] = traceCreation{created, m, slack}
		if parent == want {
			inTrace++
		} else {
			traceMismatch++
		}
	})
	t.Logf("%d leaked goroutines in the last dump; %d found in traces with the same parent, %d with another", len(lb.dumped), inTrace, traceMismatch)
	if inTrace == 0 || traceMismatch > 0 {
		t.Errorf("trace: %d leaked goroutines with matching parent, %d mismatched", inTrace, traceMismatch)
	}
}

// clockSpread is how far apart two wall-clock mappings of CLOCK_MONOTONIC
// may be. The wall clock is mapped through the capture's clock_sync pairs
// (eBPF) and through the trace's own clock snapshots (also in clock_sync):
// two mappings differ by at most the spread of the offsets they were made
// from, plus one microsecond for the trace clock's resolution (it ticks in
// 64 ns units on amd64) in the conversions.
func (lb *leakyBundle) clockSpread(t *testing.T) time.Duration {
	t.Helper()
	var offMin, offMax int64 = 1<<63 - 1, -1 << 63
	readRows(t, lb.b, schema.TableClockSync, lb.mem, func(rec arrow.Record, i int) {
		off := i64At(col(t, rec, schema.ColTS), i) - i64At(col(t, rec, schema.ColMonoNS), i)
		offMin, offMax = min(offMin, off), max(offMax, off)
	})
	return time.Duration(offMax-offMin) + time.Microsecond
}

// checkEBPFCreations checks the eBPF go_create events name at least half
// the leaked goroutines with the same parents, at the wall-clock time the
// trace has for them.
func (lb *leakyBundle) checkEBPFCreations(t *testing.T) {
	t.Helper()
	spread := lb.clockSpread(t)
	var inEBPF, ebpfMismatch, creates, clockChecked int
	var worst, worstAllowed time.Duration
	readRows(t, lb.b, schema.TableEBPFEvents, lb.mem, func(rec arrow.Record, i int) {
		if bundle.NewStrings(col(t, rec, schema.ColKind)).Value(i) != schema.EventGoCreate {
			return
		}
		creates++
		goid := i64At(col(t, rec, schema.ColGoid), i)
		want, ok := lb.dumped[goid]
		if !ok {
			return
		}
		if i64At(col(t, rec, schema.ColParentGoid), i) == want {
			inEBPF++
		} else {
			ebpfMismatch++
		}
		// eBPF and the trace must put the creation at the same wall-clock
		// time, up to the clock mappings' spread and the monotonic gap
		// between the trace event and the probe (a loaded machine can
		// deschedule the thread between the two).
		if tc := lb.traceCreated[goid]; tc.ts != 0 {
			d := time.Duration(i64At(col(t, rec, schema.ColTS), i) - tc.ts).Abs()
			allowed := spread
			if tc.mono != 0 {
				allowed += time.Duration(i64At(col(t, rec, schema.ColMonoNS), i)-tc.mono).Abs() + time.Duration(tc.slack)
			}
			clockChecked++
			if d-allowed > worst-worstAllowed || clockChecked == 1 {
				worst, worstAllowed = d, allowed
			}
		}
	})
	t.Logf("ebpf vs trace creation time of %d goroutines: worst difference %v against %v allowed (clock offsets spread %v)", clockChecked, worst, worstAllowed, spread)
	if clockChecked == 0 || worst > worstAllowed {
		t.Errorf("ebpf and trace creation times of %d goroutines differ by up to %v, more than the %v the clocks allow", clockChecked, worst, worstAllowed)
	}
	t.Logf("ebpf: %d go_create events; %d leaked goroutines with the same parent, %d with another", creates, inEBPF, ebpfMismatch)
	if inEBPF < len(lb.dumped)/2 || ebpfMismatch > 0 {
		t.Errorf("ebpf: %d of %d leaked goroutines found with matching parent, %d mismatched", inEBPF, len(lb.dumped), ebpfMismatch)
	}
}

// TestCaptureTargetExits checks that a target exiting mid-capture ends the
// capture cleanly with the reason in the manifest.
func TestCaptureTargetExits(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a live process")
	}
	t.Parallel()
	p := startSample(t, "stable-pool", "-duration", "3s")
	out := filepath.Join(t.TempDir(), "c.lsb")
	sum, err := Run(context.Background(), Options{
		PID: p.PID, Out: out, Interval: time.Second, TraceWindow: time.Second, NoEBPF: true,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.Reason, "exited") && !strings.Contains(sum.Reason, "stopped answering") {
		t.Errorf("reason %q does not say the target went away", sum.Reason)
	}
	b, err := bundle.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{bundle.SourceDump, bundle.SourcePprof, bundle.SourceTrace} {
		s := source(t, b.Manifest, k)
		if s.Status != bundle.StatusTruncated || !strings.Contains(s.Detail, "capture ended early") {
			t.Errorf("source %s: %q %q, want truncated with the reason", k, s.Status, s.Detail)
		}
	}
	if b.Manifest.End.IsZero() || len(b.Manifest.Artifacts) == 0 {
		t.Errorf("manifest end %v, %d artifacts: capture did not finish cleanly", b.Manifest.End, len(b.Manifest.Artifacts))
	}
	if _, err := bundle.Validate(out); err != nil {
		t.Error(err)
	}
}

// TestCaptureNoEBPF checks that --no-ebpf is recorded and the HTTP sources
// still run, and that Run refuses bad options and missing targets.
func TestCaptureNoEBPF(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a live process")
	}
	t.Parallel()
	p := startSample(t, "stable-pool")
	out := filepath.Join(t.TempDir(), "c.lsb")
	var log strings.Builder
	_, err := Run(context.Background(), Options{
		URL: p.URL + "/debug/pprof/", PID: p.PID, Out: out, Duration: 2 * time.Second, Interval: time.Second,
		TraceWindow: time.Second, NoEBPF: true,
	}, &syncWriter{w: &log})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "eBPF disabled") {
		t.Errorf("progress does not say eBPF is off:\n%s", log.String())
	}
	m, err := bundle.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if s := source(t, m, bundle.SourceEBPF); s.Status != bundle.StatusUnavailable || !strings.Contains(s.Detail, "--no-ebpf") {
		t.Errorf("ebpf source %q %q", s.Status, s.Detail)
	}
	if s := source(t, m, bundle.SourceDump); s.Status != bundle.StatusComplete {
		t.Errorf("dump source %q %q", s.Status, s.Detail)
	}

	if _, err := Run(context.Background(), Options{URL: p.URL, Out: filepath.Join(t.TempDir(), "x"), Interval: time.Second, TraceWindow: 2 * time.Second}, nil); err == nil || !strings.Contains(err.Error(), "longer than the interval") {
		t.Errorf("trace window > interval: err %v", err)
	}
	if _, err := Run(context.Background(), Options{URL: "http://127.0.0.1:1", Out: filepath.Join(t.TempDir(), "x")}, nil); err == nil || !strings.Contains(err.Error(), "does not serve net/http/pprof") {
		t.Errorf("dead URL: err %v", err)
	}
}

// TestCaptureInterrupted checks that cancelling the context (SIGINT) ends
// the capture with a complete bundle.
func TestCaptureInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a live process")
	}
	t.Parallel()
	p := startSample(t, "stable-pool")
	out := filepath.Join(t.TempDir(), "c.lsb")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	sum, err := Run(ctx, Options{URL: p.URL, Out: out, Interval: time.Second, TraceWindow: time.Second, CPUWindow: time.Second, NoEBPF: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reason != EndInterrupted {
		t.Errorf("reason %q", sum.Reason)
	}
	if sum.Endpoints["trace"].Artifacts == 0 || sum.Endpoints["dump"].Artifacts < 2 {
		t.Errorf("endpoints %+v: want the in-flight trace window and a final dump", sum.Endpoints)
	}
	if _, err := bundle.Validate(out); err != nil {
		t.Error(err)
	}
}
