//go:build linux

package probe

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
	exptrace "golang.org/x/exp/trace"
)

// requirePrivileged skips tb unless the process may load BPF programs:
// euid 0, or CAP_BPF and CAP_PERFMON in the effective set.
func requirePrivileged(tb testing.TB) {
	tb.Helper()
	if runtime.GOARCH != "amd64" {
		tb.Skipf("probes support amd64 only, this is %s", runtime.GOARCH)
	}
	if os.Geteuid() == 0 {
		return
	}
	const capPerfmon, capBPF = 38, 39
	status, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
				caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
				if err == nil && caps&(1<<capBPF) != 0 && caps&(1<<capPerfmon) != 0 {
					return
				}
			}
		}
	}
	tb.Skip("not privileged: needs root or CAP_BPF+CAP_PERFMON")
}

// skipIfNotSupported skips when the kernel refuses a needed feature.
func skipIfNotSupported(tb testing.TB, err error) {
	tb.Helper()
	if errors.Is(err, ebpf.ErrNotSupported) {
		tb.Skipf("kernel does not support a needed feature: %v", err)
	}
}

// spawnerRun is the outcome of tracing one spawner execution.
type spawnerRun struct {
	events []Event
	trace  string // path of the runtime/trace file
	tracer *Tracer
	stdout string
}

// traceSpawner starts the spawner, attaches a tracer while it waits,
// lets it run and collects every event.
func traceSpawner(t *testing.T, flavour string, opts Options) spawnerRun {
	t.Helper()
	exe := buildSpawner(t, flavour)
	tracePath := filepath.Join(t.TempDir(), "spawner.trace")
	cmd := exec.Command(exe, tracePath)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() // no-op once it has exited
	out := bufio.NewReader(stdoutPipe)
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("spawner said %q, %v", line, err)
	}
	tr, err := Attach(cmd.Process.Pid, opts)
	skipIfNotSupported(t, err)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tr.Close(); err != nil {
			t.Error(err)
		}
	})
	var (
		mu     sync.Mutex
		events []Event
	)
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() {
		runErr <- tr.Run(ctx, func(ev Event) {
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
		})
	}()
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(out)
	// The probes must not disturb the target: it exits 0.
	if err := cmd.Wait(); err != nil {
		t.Fatalf("traced spawner failed: %v (stdout %q)", err, rest)
	}
	cancel()
	if err := <-runErr; err != nil {
		t.Fatal(err)
	}
	return spawnerRun{events: events, trace: tracePath, tracer: tr, stdout: string(rest)}
}

// traceFacts is what the execution trace says happened.
type traceFacts struct {
	creates map[int64]int64 // child goid -> parent goid
	exits   map[int64]bool
	gcs     int
}

func readTrace(t *testing.T, path string) traceFacts {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := exptrace.NewReader(bufio.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	facts := traceFacts{creates: map[int64]int64{}, exits: map[int64]bool{}}
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read trace: %v", err)
		}
		switch ev.Kind() {
		case exptrace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != exptrace.ResourceGoroutine {
				continue
			}
			from, to := st.Goroutine()
			id := int64(st.Resource.Goroutine())
			switch {
			case from == exptrace.GoNotExist && (to == exptrace.GoRunnable || to == exptrace.GoWaiting):
				facts.creates[id] = int64(ev.Goroutine())
			case to == exptrace.GoNotExist && from != exptrace.GoUndetermined:
				facts.exits[id] = true
			}
		case exptrace.EventRangeBegin:
			if ev.Range().Name == "GC concurrent mark phase" {
				facts.gcs++
			}
		}
	}
	return facts
}

func TestTraceSpawner(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and traces a program for 2 s")
	}
	requirePrivileged(t)
	for _, flavour := range []string{"", "stripped", "pie"} {
		t.Run("flavour="+flavour, func(t *testing.T) {
			run := traceSpawner(t, flavour, Options{CreateStacks: true})
			checkSpawnerRun(t, run)
		})
	}
}

// checkSpawnerRun checks one traced spawner run: every probe attached and
// nothing dropped, and the eBPF events agree with the runtime trace on
// goroutine creation and exit, and with the spawner on allocations and GC.
func checkSpawnerRun(t *testing.T, run spawnerRun) {
	info := run.tracer.Info()
	t.Logf("binary %s %s pie=%v offsets from %s, %d probes, notes %q", info.GoVersion, info.Module, info.PIE, info.Offsets.Source, len(info.Probes), info.Notes)
	if len(info.Probes) != 5 {
		t.Errorf("probes %+v, want one newproc1 return site and four entries", info.Probes)
	}
	st := run.tracer.Stats()
	t.Logf("stats %+v; spawner %s", st, strings.TrimSpace(run.stdout))
	for kind, n := range st.Drops {
		if n != 0 {
			t.Errorf("%d %s records dropped", n, kind)
		}
	}
	facts := readTrace(t, run.trace)
	tally := tallySpawnerEvents(t, run)
	checkSpawnerCreates(t, facts, tally)
	checkSpawnerExits(t, facts, tally)
	checkSpawnerAllocsAndGC(t, facts, tally)
}

// spawnerTally counts what a spawner run's eBPF events show.
type spawnerTally struct {
	sym              *Symbolizer
	created          map[int64]Event // go_create by child goid
	exited           map[int64]bool  // goids with a go_exit
	allocs           int
	bigAllocs        int // allocs of 64 KiB or more
	allocInAllocator int // allocs with main.allocator on the stack
	gcStart, gcEnd   int
	createStacks     int // go_create events with a stack
	createInParent   int // ... whose stack goes through main.parent
	gopcInParent     int // go_create events whose go statement is in main.parent
	parkedStarts     int // go_create events starting main.parked
}

// tallySpawnerEvents counts run's events by kind, checking the shape of
// each go_create and alloc stack as it goes.
func tallySpawnerEvents(t *testing.T, run spawnerRun) *spawnerTally {
	c := &spawnerTally{sym: run.tracer.Symbolizer(), created: map[int64]Event{}, exited: map[int64]bool{}}
	logged := map[string]bool{}
	for _, ev := range run.events {
		if len(ev.Stack) > 0 && !logged[ev.Kind] {
			logged[ev.Kind] = true
			t.Logf("sample %s stack: %s", ev.Kind, formatFrames(c.sym.Frames(ev.Stack)))
		}
		switch ev.Kind {
		case schema.EventGoCreate:
			c.goCreate(t, ev)
		case schema.EventGoExit:
			c.exited[ev.Goid] = true
		case schema.EventAlloc:
			c.alloc(t, ev)
		case schema.EventGCStart:
			c.gcStart++
		case schema.EventGCEnd:
			c.gcEnd++
		}
	}
	return c
}

// goCreate counts a go_create event and checks its stack starts at
// runtime.newproc1 and then its caller.
func (c *spawnerTally) goCreate(t *testing.T, ev Event) {
	c.created[ev.Goid] = ev
	if f, _ := c.sym.Frame(ev.PC, true); f.Function == "main.parent" {
		c.gopcInParent++
	}
	if c.sym.FuncName(ev.StartPC) == "main.parked" {
		c.parkedStarts++
	}
	if len(ev.Stack) == 0 {
		return
	}
	c.createStacks++
	frames := c.sym.Frames(ev.Stack)
	if frames[0].Function != "runtime.newproc1" || len(frames) < 2 || frames[1].Function == frames[0].Function {
		t.Errorf("go_create stack does not start newproc1 then its caller: %s", formatFrames(frames))
	}
	if hasFunc(frames, "main.parent") {
		c.createInParent++
	}
}

// alloc counts an alloc event and checks it is plausible and its stack
// starts at profilealloc then mallocgc.
func (c *spawnerTally) alloc(t *testing.T, ev Event) {
	c.allocs++
	if ev.Size <= 0 || ev.Size > 1<<30 || ev.Goid < 0 || ev.Addr == 0 {
		t.Errorf("implausible alloc event %+v", ev)
		return
	}
	if ev.Size >= 64<<10 {
		c.bigAllocs++
	}
	frames := c.sym.Frames(ev.Stack)
	if ev.Goid == 0 {
		// The runtime allocating on g0 with no user goroutine
		// (allocm after gosched_m dropped curg, say).
		if hasPrefixFunc(frames, "main.") {
			t.Errorf("alloc from main code without a goroutine: %s", formatFrames(frames))
		}
		return
	}
	if frames[0].Function != "runtime.profilealloc" || len(frames) < 3 ||
		!strings.HasPrefix(frames[1].Function, "runtime.mallocgc") || frames[1] == frames[2] {
		t.Errorf("alloc stack does not start profilealloc then mallocgc, without repeats: %s", formatFrames(frames))
	}
	if hasFunc(frames, "main.allocator") {
		c.allocInAllocator++
	}
}

// checkSpawnerCreates checks every GoCreate of the trace has a go_create
// with the same child and parent, and the go_create stacks and go
// statements agree.
func checkSpawnerCreates(t *testing.T, facts traceFacts, c *spawnerTally) {
	var matched, wrongParent, missing int
	for child, parent := range facts.creates {
		ev, ok := c.created[child]
		switch {
		case !ok:
			missing++
		case ev.ParentGoid != parent:
			wrongParent++
			if wrongParent < 5 {
				t.Errorf("goroutine %d: ebpf parent %d, trace parent %d", child, ev.ParentGoid, parent)
			}
		default:
			matched++
		}
	}
	t.Logf("GoCreate: %d of %d matched on child and parent goid (%d missing, %d wrong parent); %d ebpf go_create, %d with stacks, %d through main.parent",
		matched, len(facts.creates), missing, wrongParent, len(c.created), c.createStacks, c.createInParent)
	if len(facts.creates) < 1000 || matched != len(facts.creates) {
		t.Errorf("GoCreate: %d of %d matched", matched, len(facts.creates))
	}
	// Each parent creates three children, one of them parked forever.
	t.Logf("go_create: gopc in main.parent %d, startpc main.parked %d", c.gopcInParent, c.parkedStarts)
	if c.createStacks != len(c.created) || c.createInParent != c.gopcInParent || c.parkedStarts*3 != c.gopcInParent {
		t.Errorf("go_create: %d of %d with a stack, %d stacks through main.parent, %d gopc in main.parent, %d start in main.parked",
			c.createStacks, len(c.created), c.createInParent, c.gopcInParent, c.parkedStarts)
	}
}

// checkSpawnerExits checks every GoDestroy of the trace has a go_exit.
func checkSpawnerExits(t *testing.T, facts traceFacts, c *spawnerTally) {
	var exitMatched int
	for g := range facts.exits {
		if c.exited[g] {
			exitMatched++
		}
	}
	t.Logf("GoDestroy: %d of %d matched by go_exit (%d ebpf go_exit)", exitMatched, len(facts.exits), len(c.exited))
	if len(facts.exits) < 500 || exitMatched != len(facts.exits) {
		t.Errorf("GoDestroy: %d of %d matched", exitMatched, len(facts.exits))
	}
}

// checkSpawnerAllocsAndGC checks the big allocations come from
// main.allocator and the GC probes saw the trace's mark phases.
func checkSpawnerAllocsAndGC(t *testing.T, facts traceFacts, c *spawnerTally) {
	t.Logf("alloc: %d events, %d of >= 64 KiB, %d with main.allocator on the stack", c.allocs, c.bigAllocs, c.allocInAllocator)
	if c.bigAllocs < 100 || c.allocInAllocator < c.bigAllocs/2 {
		t.Errorf("alloc: %d events >= 64 KiB, %d from main.allocator", c.bigAllocs, c.allocInAllocator)
	}

	t.Logf("GC: trace %d mark phases, ebpf %d gc_start, %d gc_end", facts.gcs, c.gcStart, c.gcEnd)
	// The probes see the whole attached period, the trace only its window.
	if c.gcStart < facts.gcs || c.gcStart > facts.gcs+2 || c.gcEnd < c.gcStart-1 || c.gcEnd > c.gcStart {
		t.Errorf("GC: trace %d cycles, ebpf %d starts and %d ends", facts.gcs, c.gcStart, c.gcEnd)
	}
}

func hasFunc(frames []bundle.StackFrame, name string) bool {
	for _, f := range frames {
		if f.Function == name {
			return true
		}
	}
	return false
}

func formatFrames(frames []bundle.StackFrame) string {
	var b strings.Builder
	for i, f := range frames {
		if i > 0 {
			b.WriteString(" <- ")
		}
		b.WriteString(f.Function)
	}
	return b.String()
}

func TestAttachErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	requirePrivileged(t)
	if _, err := Attach(1<<30, Options{}); err == nil || !strings.Contains(err.Error(), "attach to pid") {
		t.Errorf("attach to a missing pid: %v", err)
	}
	sh, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	cmd := exec.Command(sh, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	_, err = Attach(cmd.Process.Pid, Options{})
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "not a Go executable") {
		t.Errorf("attach to %s: %v, want ErrNotSupported naming a non-Go executable", sh, err)
	}
}

// TestDrops fills a one-page ring buffer without reading it: the lost
// records must be counted, and counted plus read must cover every hit.
func TestDrops(t *testing.T) {
	if testing.Short() {
		t.Skip("attaches probes")
	}
	requirePrivileged(t)
	tr, err := Attach(os.Getpid(), Options{Goroutines: true, RingBufferBytes: 4096})
	skipIfNotSupported(t, err)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	const n = 2000
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go wg.Done()
	}
	wg.Wait()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	read := 0
	if err := tr.Run(ctx, func(ev Event) {
		if ev.Kind == schema.EventGoCreate {
			read++
		}
	}); err != nil {
		t.Fatal(err)
	}
	st := tr.Stats()
	dropped := st.Drops[schema.EventGoCreate]
	t.Logf("go_create: %d read, %d dropped (%d spawned)", read, dropped, n)
	if dropped == 0 || int64(read)+dropped < n || int64(read) != st.Events[schema.EventGoCreate] {
		t.Errorf("go_create: %d read (stats %d), %d dropped, want drops and at least %d in all", read, st.Events[schema.EventGoCreate], dropped, n)
	}
}

// TestRunPolls checks that records written without a reader wakeup (the
// ring buffer far from its wake threshold) still reach a running Run
// without cancelling it: Run must poll.
func TestRunPolls(t *testing.T) {
	if testing.Short() {
		t.Skip("attaches probes")
	}
	requirePrivileged(t)
	tr, err := Attach(os.Getpid(), Options{Goroutines: true})
	skipIfNotSupported(t, err)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 3
	got := make(chan struct{}, 1)
	var creates atomic.Int64
	done := make(chan error, 1)
	go func() {
		done <- tr.Run(ctx, func(ev Event) {
			if ev.Kind == schema.EventGoCreate && creates.Add(1) >= n {
				select {
				case got <- struct{}{}:
				default:
				}
			}
		})
	}()
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go wg.Done()
	}
	wg.Wait()
	select {
	case <-got:
	case err := <-done:
		t.Fatalf("Run returned %v before delivering %d go_create events", err, n)
	case <-time.After(20 * time.Second):
		t.Fatalf("%d of %d go_create events delivered while Run was running: records written without a wakeup are not polled", creates.Load(), n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func hasPrefixFunc(frames []bundle.StackFrame, prefix string) bool {
	for _, f := range frames {
		if strings.HasPrefix(f.Function, prefix) {
			return true
		}
	}
	return false
}

// TestAttachUnprivileged re-runs this test binary as user nobody with no
// capabilities (via setpriv) and expects Attach to fail with ErrPermission.
func TestAttachUnprivileged(t *testing.T) {
	if os.Getenv("PROBE_UNPRIVILEGED_CHILD") == "1" {
		_, err := Attach(os.Getpid(), Options{})
		if !errors.Is(err, ErrPermission) || !strings.Contains(err.Error(), "CAP_BPF") {
			t.Fatalf("unprivileged Attach: %v, want ErrPermission mentioning CAP_BPF", err)
		}
		t.Logf("unprivileged Attach: %v", err)
		return
	}
	if testing.Short() {
		t.Skip("starts a process")
	}
	requirePrivileged(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv not installed")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The child must be able to read its own executable.
	dir, err := os.MkdirTemp("", "probe-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyExe := filepath.Join(dir, "probe.test")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyExe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
		copyExe, "-test.run=^TestAttachUnprivileged$", "-test.v")
	cmd.Env = append(os.Environ(), "PROBE_UNPRIVILEGED_CHILD=1")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("unprivileged child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "unprivileged Attach:") {
		t.Fatalf("child did not run the check:\n%s", out)
	}
	t.Logf("%s", out)
}
