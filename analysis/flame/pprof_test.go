package flame

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/google/pprof/profile"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/profiles"
	"github.com/leakscope/leakscope/ingest/schema"
)

// Functions with distinctive names, so that profiles of this test process
// have stacks to focus on.

var flameSink [][]byte

//go:noinline
func flameLeakAlpha(n int) {
	for i := 0; i < n; i++ {
		flameSink = append(flameSink, make([]byte, 8192))
	}
}

//go:noinline
func flameLeakBeta(n int) {
	for i := 0; i < n; i++ {
		flameSink = append(flameSink, make([]byte, 3000))
	}
}

//go:noinline
func flameParkedRecv(ch chan struct{}) { <-ch }

//go:noinline
func flameParkedSelect(ch, other chan struct{}) {
	select {
	case <-ch:
	case <-other:
	}
}

//go:noinline
func flameSpin(d time.Duration) int {
	x := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 5000; i++ {
			x += i * i
		}
	}
	return x
}

// flameSpinCPU spins until the process has used cpu more CPU time (or a
// minute has passed).
func flameSpinCPU(cpu time.Duration) int {
	used := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	x := 0
	start, deadline := used(), time.Now().Add(time.Minute)
	for used()-start < cpu && time.Now().Before(deadline) {
		x += flameSpin(10 * time.Millisecond)
	}
	return x
}

//go:noinline
func flameBlock(ch chan struct{}) { <-ch }

//go:noinline
func flameContend(mu *sync.Mutex, n int) {
	for i := 0; i < n; i++ {
		mu.Lock()
		time.Sleep(50 * time.Microsecond)
		mu.Unlock()
	}
}

// realProfiles is the outcome of profiling the test process: files on disk
// and the bundle they were ingested into.
type realProfiles struct {
	dir    string
	bundle *bundle.Bundle
	files  map[string]string // key -> .pb.gz path
	ts     map[string]int64  // key -> snapshot_ts
	parsed map[string]*profile.Profile
	goids  map[int64]int64 // goroutine dump rows written: goid -> stack id
}

var (
	realOnce sync.Once
	realData *realProfiles
	realErr  error
)

// profilesOfThisProcess profiles the test process once per test binary.
func profilesOfThisProcess(t *testing.T) *realProfiles {
	t.Helper()
	realOnce.Do(func() { realData, realErr = makeRealProfiles() })
	if realErr != nil {
		t.Fatal(realErr)
	}
	return realData
}

// stacksOfThisProcess loads the stacks of this process's profiles with a
// checked allocator, which must hold nothing when the test ends.
func stacksOfThisProcess(t *testing.T) (*realProfiles, *Stacks, memory.Allocator) {
	t.Helper()
	rp := profilesOfThisProcess(t)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	st, err := LoadStacks(rp.bundle, mem)
	if err != nil {
		t.Fatal(err)
	}
	return rp, st, mem
}

// makeRealProfiles profiles this test process (heap, allocs, goroutine,
// block, mutex and CPU) and ingests the profiles into one bundle.
func makeRealProfiles() (*realProfiles, error) {
	dir, err := os.MkdirTemp("", "flametest")
	if err != nil {
		return nil, err
	}
	rp := &realProfiles{dir: dir, files: map[string]string{}, ts: map[string]int64{}, parsed: map[string]*profile.Profile{}}
	for _, write := range []func(*realProfiles) error{writeHeapProfiles, writeGoroutineProfile, writeContentionProfiles, writeCPUProfile} {
		if err := write(rp); err != nil {
			return nil, err
		}
	}
	bdir := filepath.Join(dir, "b.lsb")
	if err := ingestRealProfiles(rp, bdir); err != nil {
		return nil, err
	}
	rp.bundle, err = bundle.Open(bdir)
	return rp, err
}

// write creates the profile file key.pb.gz in rp.dir with debugWrite and
// records its path; name is the profile's kind, for the error.
func (rp *realProfiles) write(key, name string, debugWrite func(f *os.File) error) error {
	path := filepath.Join(rp.dir, key+".pb.gz")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := debugWrite(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s profile: %w", name, err)
	}
	rp.files[key] = path
	return f.Close()
}

// lookupProfile returns a debugWrite for [realProfiles.write] that writes
// the runtime profile name in protobuf form.
func lookupProfile(name string) func(f *os.File) error {
	return func(f *os.File) error { return pprof.Lookup(name).WriteTo(f, 0) }
}

// writeHeapProfiles writes two heap snapshots, Beta allocated only before
// the second, and the allocs profile.
func writeHeapProfiles(rp *realProfiles) error {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	flameLeakAlpha(300)
	runtime.GC()
	runtime.GC()
	if err := rp.write("heap1", "heap", lookupProfile("heap")); err != nil {
		return err
	}
	flameLeakBeta(500)
	runtime.GC()
	runtime.GC()
	if err := rp.write("heap2", "heap", lookupProfile("heap")); err != nil {
		return err
	}
	if err := rp.write("allocs", "allocs", lookupProfile("allocs")); err != nil {
		return err
	}
	runtime.MemProfileRate = old
	return nil
}

// writeGoroutineProfile writes the goroutine profile while goroutines are
// parked in two distinctive functions.
func writeGoroutineProfile(rp *realProfiles) error {
	stop := make(chan struct{})
	var started sync.WaitGroup
	for i := 0; i < 37; i++ {
		started.Add(1)
		go func() { started.Done(); flameParkedRecv(stop) }()
	}
	for i := 0; i < 11; i++ {
		started.Add(1)
		go func() { started.Done(); flameParkedSelect(stop, nil) }()
	}
	started.Wait()
	if err := waitParked(map[string]int64{"flameParkedRecv": 37, "flameParkedSelect": 11}); err != nil {
		close(stop)
		return err
	}
	err := rp.write("goroutine", "goroutine", lookupProfile("goroutine"))
	close(stop)
	return err
}

// writeContentionProfiles writes the block and mutex profiles after
// blocking on a channel and contending on a mutex.
func writeContentionProfiles(rp *realProfiles) error {
	runtime.SetBlockProfileRate(1)
	prevFrac := runtime.SetMutexProfileFraction(1)
	ch := make(chan struct{})
	go func() { time.Sleep(5 * time.Millisecond); close(ch) }()
	flameBlock(ch)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); flameContend(&mu, 50) }()
	}
	wg.Wait()
	runtime.SetBlockProfileRate(0)
	runtime.SetMutexProfileFraction(prevFrac)
	if err := rp.write("block", "block", lookupProfile("block")); err != nil {
		return err
	}
	return rp.write("mutex", "mutex", lookupProfile("mutex"))
}

// writeCPUProfile writes a short CPU profile of a busy function.
func writeCPUProfile(rp *realProfiles) error {
	return rp.write("cpu", "cpu", func(f *os.File) error {
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		// 300 ms of CPU, not of wall time: on a loaded machine a wall-time
		// spin may get no CPU at all, and the profile then no sample.
		flameSpinCPU(300 * time.Millisecond)
		pprof.StopCPUProfile()
		return nil
	})
}

// ingestRealProfiles ingests every profile of rp into the bundle bdir with
// the real pprof ingest, keeps each one parsed by pprof, and adds a
// goroutine "dump" made from the goroutine profile: one goroutines row per
// goroutine, real stacks, made-up goids.
func ingestRealProfiles(rp *realProfiles, bdir string) error {
	mem := memory.NewGoAllocator()
	w, err := bundle.Create(bdir, bundle.NewManifest("flametest", "test"), mem)
	if err != nil {
		return err
	}
	for _, key := range []string{"heap1", "heap2", "allocs", "goroutine", "block", "mutex", "cpu"} {
		f, err := os.Open(rp.files[key])
		if err != nil {
			return err
		}
		a := &bundle.Artifact{Name: key + ".pb.gz"}
		err = profiles.Ingest(w, f, a)
		f.Close()
		if err != nil {
			w.Abort()
			return fmt.Errorf("ingest %s: %w", key, err)
		}
		rp.ts[key] = a.Time.UnixNano()
		f, _ = os.Open(rp.files[key])
		p, err := profile.Parse(f)
		f.Close()
		if err != nil {
			return err
		}
		rp.parsed[key] = p
	}
	rp.goids, err = writeDumpRows(w, rp.parsed["goroutine"], rp.ts["goroutine"])
	if err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

// waitParked waits until the goroutine profile shows at least the given
// number of goroutines in each function (started goroutines may not have
// reached their parking function yet on a loaded machine).
func waitParked(want map[string]int64) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		var buf bytes.Buffer
		if err := pprof.Lookup("goroutine").WriteTo(&buf, 0); err != nil {
			return err
		}
		p, err := profile.Parse(&buf)
		if err != nil {
			return err
		}
		ok := true
		for fn, n := range want {
			re := regexp.MustCompile(regexp.QuoteMeta(fn))
			if sumWhere(p, 0, func(s *profile.Sample) bool { return anyFrame(s, re) }) < n {
				ok = false
			}
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("goroutines did not park within 30s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// writeDumpRows writes one goroutines row per goroutine counted by a
// goroutine profile, with goids 1, 2, ... in sample order.
func writeDumpRows(w *bundle.Writer, p *profile.Profile, ts int64) (map[int64]int64, error) {
	goids := map[int64]int64{}
	goid := int64(0)
	for _, s := range p.Sample {
		sid, err := w.StackID(stackFrames(s))
		if err != nil {
			return nil, err
		}
		for k := int64(0); k < s.Value[0]; k++ {
			goid++
			goids[goid] = sid
			if err := w.Append(schema.Goroutine{SnapshotTS: ts, Goid: goid, State: "chan receive", StackID: sid}); err != nil {
				return nil, err
			}
		}
	}
	return goids, nil
}

// stackFrames expands a sample's locations into frames, leaf first,
// inlined calls first (Line[0] is the innermost).
func stackFrames(s *profile.Sample) []bundle.StackFrame {
	var out []bundle.StackFrame
	for _, loc := range s.Location {
		for i, ln := range loc.Line {
			out = append(out, bundle.StackFrame{Function: ln.Function.Name, File: ln.Function.Filename, Line: ln.Line, Inlined: i < len(loc.Line)-1})
		}
	}
	return out
}

// sampleIndex returns the index of a sample type in p.
func sampleIndex(t *testing.T, p *profile.Profile, typ string) int {
	t.Helper()
	for i, st := range p.SampleType {
		if st.Type == typ {
			return i
		}
	}
	t.Fatalf("profile has no sample type %s", typ)
	return -1
}

// sumWhere sums one sample type over the samples for which keep is true.
func sumWhere(p *profile.Profile, idx int, keep func(*profile.Sample) bool) int64 {
	var s int64
	for _, smp := range p.Sample {
		if keep == nil || keep(smp) {
			s += smp.Value[idx]
		}
	}
	return s
}

// anyFrame reports whether a frame of s has a function or file matching re,
// as pprof's -focus matches.
func anyFrame(s *profile.Sample, re *regexp.Regexp) bool {
	for _, loc := range s.Location {
		for _, ln := range loc.Line {
			if re.MatchString(ln.Function.Name) || re.MatchString(ln.Function.Filename) {
				return true
			}
		}
	}
	return false
}

// pprofStat is one line of `go tool pprof -top`.
type pprofStat struct{ flat, cum int64 }

// pprofTop runs the real `go tool pprof -top` and parses every line.
func pprofTop(t *testing.T, args ...string) map[string]pprofStat {
	t.Helper()
	full := append([]string{"tool", "pprof", "-symbolize=none", "-top", "-nodecount=1000000", "-nodefraction=0", "-edgefraction=0"}, args...)
	cmd := exec.Command("go", full...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(full, " "), err, stderr.String())
	}
	stats := map[string]pprofStat{}
	header := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if !header {
			header = len(f) >= 5 && f[0] == "flat" && f[3] == "cum"
			continue
		}
		if len(f) < 6 {
			t.Fatalf("unexpected pprof line %q", line)
		}
		name := strings.Join(f[5:], " ")
		name = strings.TrimSuffix(strings.TrimSuffix(name, " (inline)"), " (partial-inline)")
		flat, cum := pprofNumber(t, f[0]), pprofNumber(t, f[3])
		if _, dup := stats[name]; dup {
			t.Fatalf("pprof lists %s twice", name)
		}
		stats[name] = pprofStat{flat, cum}
	}
	if !header {
		t.Fatalf("no table in pprof output:\n%s", out)
	}
	return stats
}

func pprofNumber(t *testing.T, s string) int64 {
	t.Helper()
	s = strings.TrimSuffix(strings.TrimSuffix(s, "ns"), "B")
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("pprof number %q: %v", s, err)
	}
	return v
}

func unitFlag(value string) string {
	switch Unit(value) {
	case "bytes":
		return "-unit=B"
	case "nanoseconds":
		return "-unit=ns"
	}
	return "-unit=minimum"
}

// sameAsPprof compares Top(tree) with pprof's table, function by function.
func sameAsPprof(t *testing.T, tree *Tree, want map[string]pprofStat) {
	t.Helper()
	got := map[string]pprofStat{}
	for _, f := range Top(tree) {
		if f.Flat != 0 || f.Cum != 0 {
			got[f.Name] = pprofStat{f.Flat, f.Cum}
		}
	}
	for name, w := range want {
		if w.flat == 0 && w.cum == 0 {
			continue
		}
		if got[name] != w {
			t.Errorf("%s: flat/cum %d/%d, pprof says %d/%d", name, got[name].flat, got[name].cum, w.flat, w.cum)
		}
	}
	for name, g := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s (flat %d, cum %d) is not in pprof's output", name, g.flat, g.cum)
		}
	}
	if len(want) < 2 {
		t.Errorf("pprof listed only %d functions; the profile is too thin to compare", len(want))
	}
}

func TestMatchesPprof(t *testing.T) {
	rp, st, mem := stacksOfThisProcess(t)
	cases := []struct{ key, profile, value, pprofType string }{
		{"heap1", schema.ProfileHeap, schema.ColInuseSpace, "inuse_space"},
		{"heap2", schema.ProfileHeap, schema.ColInuseSpace, "inuse_space"},
		{"heap2", schema.ProfileHeap, schema.ColInuseObjects, "inuse_objects"},
		{"heap2", schema.ProfileHeap, schema.ColAllocObjects, "alloc_objects"},
		{"allocs", schema.ProfileAllocs, schema.ColAllocSpace, "alloc_space"},
		{"goroutine", schema.ProfileGoroutine, schema.ColCount, "goroutine"},
		{"block", schema.ProfileBlock, schema.ColDelay, "delay"},
		{"block", schema.ProfileBlock, schema.ColContentions, "contentions"},
		{"mutex", schema.ProfileMutex, schema.ColDelay, "delay"},
		{"cpu", schema.ProfileCPU, schema.ColCPUNanosecs, "cpu"},
		{"cpu", schema.ProfileCPU, schema.ColSamplesCount, "samples"},
	}
	for _, c := range cases {
		t.Run(c.key+"/"+c.value, func(t *testing.T) {
			p := rp.parsed[c.key]
			tree, err := st.Build(rp.bundle, mem, Query{Profile: c.profile, Value: c.value, Snapshot: rp.ts[c.key]})
			if err != nil {
				t.Fatal(err)
			}
			want := sumWhere(p, sampleIndex(t, p, c.pprofType), nil)
			if tree.Total() != want || want == 0 {
				t.Fatalf("root total %d, profile.Parse sum %d (must be non-zero)", tree.Total(), want)
			}
			if tree.Snapshot != rp.ts[c.key] || tree.Unit != Unit(c.value) {
				t.Errorf("tree snapshot %d unit %s", tree.Snapshot, tree.Unit)
			}
			sameAsPprof(t, tree, pprofTop(t, "-sample_index="+c.pprofType, unitFlag(c.value), rp.files[c.key]))
		})
	}
}

func TestFocusIgnoreDiffInvertMatchPprof(t *testing.T) {
	rp, st, mem := stacksOfThisProcess(t)
	h2 := rp.parsed["heap2"]
	c := heapChecks{
		rp: rp, st: st, mem: mem, h1: rp.parsed["heap1"], h2: h2,
		inuse: sampleIndex(t, h2, "inuse_space"),
		alpha: regexp.MustCompile("flameLeakAlpha"),
		beta:  regexp.MustCompile("flameLeakBeta"),
		base:  Query{Profile: schema.ProfileHeap, Snapshot: rp.ts["heap2"]},
	}
	t.Run("focus", c.focus)
	t.Run("ignore", c.ignore)
	t.Run("diff", c.diff)
	t.Run("invert", c.invert)
}

// heapChecks is what the heap focus, ignore, diff and invert checks share:
// the two heap snapshots as pprof parses them, their inuse_space index, the
// two leak functions and the query of the second snapshot.
type heapChecks struct {
	rp          *realProfiles
	st          *Stacks
	mem         memory.Allocator
	h1, h2      *profile.Profile
	inuse       int
	alpha, beta *regexp.Regexp
	base        Query
}

// focus: focusing on Alpha keeps exactly its samples, as pprof -focus.
func (c heapChecks) focus(t *testing.T) {
	q := c.base
	q.Focus = []string{"flameLeakAlpha"}
	tree, err := c.st.Build(c.rp.bundle, c.mem, q)
	if err != nil {
		t.Fatal(err)
	}
	want := sumWhere(c.h2, c.inuse, func(s *profile.Sample) bool { return anyFrame(s, c.alpha) })
	if tree.Total() != want || want < 300*8192 {
		t.Fatalf("focus total %d, want %d (at least the 300 live 8 KiB buffers)", tree.Total(), want)
	}
	sameAsPprof(t, tree, pprofTop(t, "-sample_index=inuse_space", "-unit=B", "-focus=flameLeakAlpha", c.rp.files["heap2"]))
}

// ignore: ignoring both leak functions drops their samples, as pprof
// -ignore.
func (c heapChecks) ignore(t *testing.T) {
	q := c.base
	q.Ignore = []string{"flameLeakAlpha", "flameLeakBeta"}
	tree, err := c.st.Build(c.rp.bundle, c.mem, q)
	if err != nil {
		t.Fatal(err)
	}
	want := sumWhere(c.h2, c.inuse, func(s *profile.Sample) bool { return !anyFrame(s, c.alpha) && !anyFrame(s, c.beta) })
	all := sumWhere(c.h2, c.inuse, nil)
	if tree.Total() != want || want >= all {
		t.Fatalf("ignore total %d, want %d (less than all %d)", tree.Total(), want, all)
	}
	sameAsPprof(t, tree, pprofTop(t, "-sample_index=inuse_space", "-unit=B", "-ignore=flameLeakAlpha|flameLeakBeta", c.rp.files["heap2"]))
}

// diff: the second snapshot against the first is pprof -diff_base, and
// Beta's change is all of its new value.
func (c heapChecks) diff(t *testing.T) {
	h1, h2, inuse := c.h1, c.h2, c.inuse
	q := c.base
	q.Base = c.rp.ts["heap1"]
	tree, err := c.st.Build(c.rp.bundle, c.mem, q)
	if err != nil {
		t.Fatal(err)
	}
	want := sumWhere(h2, inuse, nil) - sumWhere(h1, inuse, nil)
	if tree.Total() != want || tree.Root.BaseTotal != sumWhere(h1, inuse, nil) {
		t.Fatalf("diff total %d base %d, want %d and %d", tree.Total(), tree.Root.BaseTotal, want, sumWhere(h1, inuse, nil))
	}
	// Beta only allocated between the two snapshots: its change is
	// all of its new value.
	q.Focus = []string{"flameLeakBeta"}
	bt, err := c.st.Build(c.rp.bundle, c.mem, q)
	if err != nil {
		t.Fatal(err)
	}
	wantBeta := sumWhere(h2, inuse, func(s *profile.Sample) bool { return anyFrame(s, c.beta) })
	if bt.Total() != wantBeta || wantBeta < 500*3000 {
		t.Fatalf("beta growth %d, want %d", bt.Total(), wantBeta)
	}
	sameAsPprof(t, tree, pprofTop(t, "-sample_index=inuse_space", "-unit=B", "-diff_base="+c.rp.files["heap1"], c.rp.files["heap2"]))
}

// invert: the inverted tree's roots are the leaves, each with what pprof's
// samples hold under it.
func (c heapChecks) invert(t *testing.T) {
	h2, inuse := c.h2, c.inuse
	q := c.base
	q.Invert = true
	inv, err := c.st.Build(c.rp.bundle, c.mem, q)
	if err != nil {
		t.Fatal(err)
	}
	if inv.Total() != sumWhere(h2, inuse, nil) {
		t.Fatalf("inverted total %d, want %d", inv.Total(), sumWhere(h2, inuse, nil))
	}
	byLeaf := map[string]int64{}
	for _, s := range h2.Sample {
		if v := s.Value[inuse]; v != 0 {
			byLeaf[s.Location[0].Line[0].Function.Name] += v
		}
	}
	got := map[string]int64{}
	for _, c := range inv.Root.Children {
		got[c.Name] = c.Total
	}
	for name, v := range byLeaf {
		if got[name] != v {
			t.Errorf("leaf %s: %d, want %d", name, got[name], v)
		}
	}
	if len(got) != len(byLeaf) {
		t.Errorf("%d leaves, want %d", len(got), len(byLeaf))
	}
	sameAsPprof(t, inv, pprofTop(t, "-sample_index=inuse_space", "-unit=B", c.rp.files["heap2"]))
}
