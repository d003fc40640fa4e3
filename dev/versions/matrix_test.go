package versions

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leakscope/leakscope/capture"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
	"github.com/leakscope/leakscope/samples"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite the version table of docs/CAPTURE.md from this run")

// The target's functions (see target/main.go).
const (
	leakFn    = "main.worker"   // blocked forever on a channel send
	creatorFn = "main.producer" // its creator
	idleFn    = "main.idler"    // parked but reachable: not a leak
	churnFn   = "main.churn"    // allocates, making GC cycles and samples
)

// Capture settings of every matrix case: a snapshot every 2 s, 1 s trace
// and CPU windows at the start of each interval. A case captures until
// the bundle holds enough of every source (see enough), not for a fixed
// time: on a loaded machine attaching and scraping take longer.
const (
	captureEvery = 2 * time.Second
	windowFor    = time.Second
	maxCapture   = 3 * time.Minute
)

// Sources checked per case, in the version table's order.
var matrixSources = []string{"pprof", "dump", "trace", "ebpf", "goroutineleak", "report"}

// matrixCase is one toolchain and build mode.
type matrixCase struct {
	toolchain string
	mode      Mode
	exe       string
}

func (mc matrixCase) name() string { return mc.toolchain + "/" + string(mc.mode) }

// TestMatrix builds the target with every toolchain in every mode,
// captures each live with every source (eBPF as root) and checks each
// source against the others; then it compares the version table in docs/CAPTURE.md
// with what it verified (-update-readme rewrites it).
func TestMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the target with six Go releases and captures 18 processes")
	}
	res := &matrixResults{passed: map[string]map[string]bool{}}
	t.Run("capture", func(t *testing.T) {
		for _, mc := range matrixCases() {
			t.Run(mc.name(), func(t *testing.T) {
				t.Parallel()
				runCase(t, mc, res)
			})
		}
	})
	if t.Failed() {
		return
	}
	checkReadme(t, res)
}

// matrixCases lists every toolchain in every mode.
func matrixCases() []matrixCase {
	var cases []matrixCase
	for _, tc := range Toolchains {
		for _, mode := range Modes {
			cases = append(cases, matrixCase{toolchain: tc, mode: mode})
		}
	}
	return cases
}

// build builds the case's binary (cached between runs; the goroutineleak
// experiment where the release needs it).
func (mc *matrixCase) build(t *testing.T) {
	dir, err := TargetDir()
	if err != nil {
		t.Fatal(err)
	}
	exp, _ := LeakProfileExperiment(mc.toolchain)
	start := time.Now()
	mc.exe, err = Build(t.Context(), Spec{Dir: dir, Toolchain: mc.toolchain, Mode: mc.mode, Experiment: exp})
	if err != nil {
		t.Fatalf("%v (make deps fetches the toolchains)", err)
	}
	t.Logf("binary %s ready in %v", mc.exe, time.Since(start).Round(time.Millisecond))
}

// runCase captures one case and runs every source's checks as subtests.
func runCase(t *testing.T, mc matrixCase, res *matrixResults) {
	mc.build(t)
	c := captureCase(t, mc)
	t.Cleanup(func() { keepFailed(t, c.dir) })
	checks := map[string]func(*testing.T){
		"pprof":         func(t *testing.T) { checkPprof(t, c) },
		"dump":          func(t *testing.T) { checkDumps(t, c) },
		"trace":         func(t *testing.T) { checkTrace(t, c, mc.toolchain) },
		"ebpf":          func(t *testing.T) { checkEBPF(t, c, mc) },
		"goroutineleak": func(t *testing.T) { checkLeakProfile(t, c, mc.toolchain) },
		"report":        func(t *testing.T) { checkReport(t, c) },
	}
	for _, src := range matrixSources {
		ok := t.Run(src, checks[src])
		res.record(mc, src, ok)
	}
}

// captureCase starts the case's binary and captures it until the bundle
// holds enough of every source.
func captureCase(t *testing.T, mc matrixCase) *captured {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := samples.StartBinary(ctx, mc.exe)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "c.lsb")
	var log lockedBuffer
	runCtx, stop := context.WithCancel(ctx)
	var sum capture.Summary
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		sum, err = capture.Run(runCtx, capture.Options{
			PID: p.PID, Out: out, Interval: captureEvery, TraceWindow: windowFor, CPUWindow: windowFor,
			EBPFBudget: 1, // the probes attached throughout: the checks compare every creation with the trace's
		}, &log)
	}()
	waitEnough(t, out, mc.toolchain, done)
	stop()
	<-done
	t.Logf("captured for %v; progress:\n%s", time.Since(start).Round(time.Millisecond), log.String())
	if err != nil {
		p.Stop()
		t.Fatal(err)
	}
	if sum.Reason != capture.EndInterrupted {
		t.Errorf("capture ended with %q, want %q", sum.Reason, capture.EndInterrupted)
	}
	// Probes must not disturb the target: it still exits 0 on SIGTERM.
	if err := p.Stop(); err != nil {
		t.Errorf("target after capture: %v", err)
	}
	if _, err := bundle.Validate(out); err != nil {
		t.Errorf("bundle does not validate: %v", err)
	}
	return readCapture(t, out)
}

// waitEnough returns once the bundle holds what the checks need (see
// progress.enough), the capture has ended, or maxCapture has passed.
func waitEnough(t *testing.T, out, toolchain string, done <-chan struct{}) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	limit := time.After(maxCapture)
	p := &progress{dir: out, toolchain: toolchain, windows: map[string]*rawTrace{}}
	for {
		select {
		case <-done:
			return
		case <-limit:
			m, _ := bundle.ReadManifest(out)
			t.Errorf("after %v the bundle lists only %d artifacts: %+v", maxCapture, len(m.Artifacts), m.Artifacts)
			return
		case <-tick.C:
			if m, err := bundle.ReadManifest(out); err == nil && p.enough(m) {
				return
			}
		}
	}
}

// progress tracks what a capture in progress has recorded; it reads each
// finished trace window once.
type progress struct {
	dir, toolchain string
	windows        map[string]*rawTrace // by artifact name
}

// enough reports whether m lists three dumps (the final one comes on
// top), a CPU profile, where the runtime serves it two goroutineleak
// profiles, and trace windows holding at least two windows, 20 goroutine
// creations and ends, and two whole GC cycles: on a loaded machine a
// window holds less.
func (p *progress) enough(m bundle.Manifest) bool {
	n := map[string]int{}
	var windows, creates, ends, gcs int
	for _, a := range m.Artifacts {
		if a.Status != bundle.StatusComplete {
			continue
		}
		n[a.Kind]++
		n[a.Profile]++
		if a.Kind != bundle.SourceTrace {
			continue
		}
		rt, ok := p.windows[a.Name]
		if !ok {
			rt, _ = readRawTrace(filepath.Join(p.dir, a.Name))
			p.windows[a.Name] = rt
		}
		if rt != nil {
			windows++
			creates, ends, gcs = creates+len(rt.creates), ends+len(rt.ends), gcs+len(rt.gcs)
		}
	}
	_, leak := LeakProfileExperiment(p.toolchain)
	return n[bundle.SourceDump] >= minSnapshots && n[schema.ProfileCPU] >= 1 &&
		(!leak || n[schema.ProfileGoroutineLeak] >= 2) &&
		windows >= 2 && creates >= 20 && ends >= 20 && gcs >= 2
}

// keepFailed moves the bundle of a failed case out of the test's
// temporary directory, so that it can be inspected, and says where.
func keepFailed(t *testing.T, dir string) {
	if !t.Failed() {
		return
	}
	keep, err := os.MkdirTemp("", "leakscope-matrix-failed-")
	if err == nil {
		err = os.Rename(dir, filepath.Join(keep, filepath.Base(dir)))
	}
	if err != nil {
		t.Logf("keep the failed case's bundle: %v", err)
		return
	}
	t.Logf("bundle of the failed case kept in %s", keep)
}

// matrixResults collects which source passed in which case.
type matrixResults struct {
	mu     sync.Mutex
	passed map[string]map[string]bool // case name -> source -> passed
}

func (r *matrixResults) record(mc matrixCase, src string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.passed[mc.name()] == nil {
		r.passed[mc.name()] = map[string]bool{}
	}
	r.passed[mc.name()][src] = ok
}

// lockedBuffer is a bytes.Buffer safe for the capture's concurrent
// progress writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// checkReadme compares the version table of docs/CAPTURE.md with this
// run's.
func checkReadme(t *testing.T, res *matrixResults) {
	switch {
	case os.Geteuid() != 0:
		t.Log("not root: eBPF was not verified, so the version table in docs/CAPTURE.md is not compared")
		return
	case len(res.passed) != len(matrixCases()):
		t.Logf("%d of %d cases ran: the version table in docs/CAPTURE.md is not compared", len(res.passed), len(matrixCases()))
		return
	}
	path := filepath.Join("..", "..", "docs", "CAPTURE.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := strings.Index(string(data), tableBegin), strings.Index(string(data), tableEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s has no %q ... %q section", path, tableBegin, tableEnd)
	}
	want := versionTable(res)
	got := string(data[begin+len(tableBegin) : end])
	if got == want {
		return
	}
	if *updateReadme {
		out := string(data[:begin+len(tableBegin)]) + want + string(data[end:])
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/CAPTURE.md's version table differs from what the matrix verified; run go test ./dev/versions -run TestMatrix -update-readme\nwant:%s\ngot:%s", want, got)
}
