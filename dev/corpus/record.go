package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/leakscope/leakscope/samples/blocking"
)

// The artifacts a recording holds, by file name.
const (
	Traceback       = "traceback.txt"        // SIGQUIT right after the trigger
	TestTimeout     = "test-timeout.txt"     // go test -timeout output
	Dump1           = "dump-1.txt"           // first dump after the trigger
	Dump2           = "dump-2.txt"           // one second later
	MinuteDump      = "dump-minute.txt"      // once the blocked goroutines show 1 minute
	MinuteTraceback = "traceback-minute.txt" // SIGQUIT after MinuteDump
	LeakDump1       = "leak-dump-1.txt"      // the goroutineleak run's two dumps
	LeakDump2       = "leak-dump-2.txt"
	LeakProfile     = "goroutineleak.pb.gz" // the runtime's goroutineleak profile, after LeakDump2
	AllAsleep       = "all-asleep.txt"      // the runtime's own deadlock crash, run without the hook
)

// Run-time bounds; the harness waits for observed states, and these only
// end a run that never gets there.
const (
	triggerTimeout = 90 * time.Second
	minuteTimeout  = 4 * time.Minute
	testTimeout    = 40 * time.Second // -test.timeout of the timeout run
	pollEvery      = 100 * time.Millisecond
	asleepWait     = time.Minute // how long a run without the hook may take to deadlock
)

// Artifact is one recorded input file.
type Artifact struct {
	Name string    `json:"name"`
	At   time.Time `json:"at"`
}

// Recording is what was recorded of one program.
type Recording struct {
	Program   string     `json:"program"`
	Toolchain string     `json:"toolchain"`
	Artifacts []Artifact `json:"artifacts"`
	// Problems says which runs failed or never triggered, and why.
	Problems []string `json:"problems,omitempty"`
	// Source is the directory, relative to Dir, holding the copy of the
	// program's source it was built from (the paths its frames name).
	Source string `json:"source,omitempty"`
	// Dir holds the artifact files.
	Dir string `json:"-"`

	mu sync.Mutex
}

// Has reports whether the named artifact was recorded.
func (r *Recording) Has(name string) bool { return r.artifact(name) != nil }

func (r *Recording) artifact(name string) *Artifact {
	for i := range r.Artifacts {
		if r.Artifacts[i].Name == name {
			return &r.Artifacts[i]
		}
	}
	return nil
}

// add writes an artifact; a failed write is recorded as a problem.
func (r *Recording) add(name string, at time.Time, body []byte) {
	if err := os.WriteFile(filepath.Join(r.Dir, name), body, 0o644); err != nil {
		r.problem("%v", err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Artifacts = append(r.Artifacts, Artifact{Name: name, At: at})
}

func (r *Recording) problem(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// save writes recording.json beside the artifacts.
func (r *Recording) save() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	sort.Slice(r.Artifacts, func(i, j int) bool { return r.Artifacts[i].Name < r.Artifacts[j].Name })
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(r.Dir, "recording.json"), b, 0o644)
}

// LoadRecordings reads the recordings a previous [Record] left in dir
// (one subdirectory per program), so the analysis can be measured again
// without running the programs.
func LoadRecordings(dir string) ([]*Recording, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []*Recording
	for _, e := range entries {
		path := filepath.Join(dir, e.Name(), "recording.json")
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		r := &Recording{Dir: filepath.Join(dir, e.Name())}
		if err := json.Unmarshal(b, r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// Record builds every program with tc and runs it in four ways side by
// side (all programs at once, so the minute-long wait is paid once):
// a main run (two dumps a second apart, then a dump and a traceback once
// the blocked goroutines have waited a minute), a SIGQUIT run right after
// the trigger, a goroutineleak run (two dumps, then the profile) and, for
// test kernels, a run that ends by its own -test.timeout. Artifacts go
// to out/<program>/. logf, if set, reports progress.
func Record(ctx context.Context, progs []blocking.Program, tc Toolchain, out string, logf func(string, ...any)) ([]*Recording, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	bins, err := buildAll(ctx, progs, tc, out, sourceDir, logf)
	if err != nil {
		return nil, err
	}
	runs := filepath.Join(out, "run")
	if err := os.MkdirAll(runs, 0o755); err != nil {
		return nil, err
	}
	recs := make([]*Recording, len(progs))
	short := make(chan struct{}, 6) // quit and leak runs are short: a few at a time
	var wg sync.WaitGroup
	for i, p := range progs {
		r := &Recording{Program: p.Truth.Name, Toolchain: tc.Name, Dir: filepath.Join(out, p.Truth.Name), Source: sourceDir}
		if err := os.MkdirAll(r.Dir, 0o755); err != nil {
			return nil, err
		}
		recs[i] = r
		todo := []func(){
			func() { mainRun(ctx, p, bins[i], runs, r) },
			func() { short <- struct{}{}; defer func() { <-short }(); quitRun(ctx, p, bins[i], runs, r) },
			func() { short <- struct{}{}; defer func() { <-short }(); leakRun(ctx, p, bins[i], runs, r) },
			func() { asleepRun(ctx, p, bins[i], runs, r) }, // idle until it dies or its bound
		}
		if p.Truth.Shape == blocking.ShapeTest {
			todo = append(todo, func() { timeoutRun(ctx, p, bins[i], runs, r) })
		}
		for _, run := range todo {
			wg.Add(1)
			go func() { defer wg.Done(); run() }()
		}
	}
	wg.Wait()
	for _, r := range recs {
		if err := r.save(); err != nil {
			return nil, err
		}
		for _, pr := range r.Problems {
			logf("%s: %s", r.Program, pr)
		}
	}
	return recs, ctx.Err()
}

// sourceDir is where, in a program's recording directory, the copy of its
// source that was built lives.
const sourceDir = "src"

// buildAll compiles the programs, two at a time (the machine has two
// cores), each from a copy of its source in out/<program>/<src>.
func buildAll(ctx context.Context, progs []blocking.Program, tc Toolchain, out, src string, logf func(string, ...any)) ([]string, error) {
	dir := filepath.Join(out, "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	bins := make([]string, len(progs))
	errs := make([]error, len(progs))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, p := range progs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			bins[i], errs[i] = build(ctx, p, tc, dir, filepath.Join(out, p.Truth.Name, src))
		}()
	}
	wg.Wait()
	logf("built %d programs with %s", len(progs), tc.Name)
	return bins, errors.Join(errs...)
}

// args runs a test kernel's one test, with the timeout go test would give.
func args(p blocking.Program, timeout time.Duration) []string {
	if p.Truth.Shape != blocking.ShapeTest {
		return nil
	}
	return []string{"-test.run", "^" + p.Truth.Test + "$", "-test.timeout", timeout.String()}
}

// awaitTrigger polls dumps until the truth's goroutines are all there in
// two consecutive dumps (so a passing state is not taken for the bug) and
// returns the second dump.
func awaitTrigger(p *proc, t blocking.Truth) ([]byte, time.Time, error) {
	want := triggerSet(t)
	deadline := time.Now().Add(triggerTimeout)
	seen := false
	for time.Now().Before(deadline) {
		at := time.Now()
		b, err := p.dump()
		if err != nil {
			return nil, at, err
		}
		gs, err := readDump(b)
		if err != nil {
			return nil, at, fmt.Errorf("read own dump: %w", err)
		}
		if present(gs, want, 0) {
			if seen {
				return b, at, nil
			}
			seen = true
		} else {
			seen = false
		}
		time.Sleep(pollEvery)
	}
	return nil, time.Time{}, fmt.Errorf("not triggered within %v", triggerTimeout)
}

func mainRun(ctx context.Context, prog blocking.Program, bin, tmp string, r *Recording) {
	p, err := start(ctx, prog.Truth.Name, bin, tmp, args(prog, 10*time.Minute)...)
	if err != nil {
		r.problem("main run: %v", err)
		return
	}
	defer p.kill()
	b, at, err := awaitTrigger(p, prog.Truth)
	if err != nil {
		r.problem("main run: %v", err)
		return
	}
	r.add(Dump1, at, b)
	time.Sleep(time.Second)
	at = time.Now()
	if b, err = p.dump(); err != nil {
		r.problem("main run: second dump: %v", err)
		return
	}
	r.add(Dump2, at, b)
	// The runtime learns when a goroutine began to wait at the next GC;
	// a heap profile with gc=1 (what capture scrapes) runs one.
	gcAt := time.Now()
	if _, err := p.get("/debug/pprof/heap?gc=1"); err != nil {
		r.problem("main run: heap: %v", err)
		return
	}
	b, at, err = awaitMinute(p, prog.Truth, gcAt)
	if err != nil {
		r.problem("main run: %v", err)
		return
	}
	r.add(MinuteDump, at, b)
	at = time.Now()
	if b, err = p.quit(); err != nil {
		r.problem("main run: %v", err)
		return
	}
	r.add(MinuteTraceback, at, b)
}

// awaitMinute polls until every blocked goroutine shows a wait of at least
// one minute (for a control: a minute after the GC, with its look-alikes
// in place) and returns that dump.
func awaitMinute(p *proc, t blocking.Truth, gcAt time.Time) ([]byte, time.Time, error) {
	deadline := gcAt.Add(minuteTimeout)
	for time.Now().Before(deadline) {
		if !t.Healthy || time.Since(gcAt) > 61*time.Second {
			at := time.Now()
			b, err := p.dump()
			if err != nil {
				return nil, at, err
			}
			gs, err := readDump(b)
			if err != nil {
				return nil, at, err
			}
			if present(gs, t.Blocked, 1) && present(gs, t.Parked, 0) {
				return b, at, nil
			}
		}
		time.Sleep(2 * time.Second)
	}
	return nil, time.Time{}, fmt.Errorf("no dump showed a one-minute wait within %v of the GC", minuteTimeout)
}

func quitRun(ctx context.Context, prog blocking.Program, bin, tmp string, r *Recording) {
	p, err := start(ctx, prog.Truth.Name, bin, tmp, args(prog, 10*time.Minute)...)
	if err != nil {
		r.problem("traceback run: %v", err)
		return
	}
	defer p.kill()
	if _, _, err := awaitTrigger(p, prog.Truth); err != nil {
		r.problem("traceback run: %v", err)
		return
	}
	at := time.Now()
	b, err := p.quit()
	if err != nil {
		r.problem("traceback run: %v", err)
		return
	}
	r.add(Traceback, at, b)
}

func leakRun(ctx context.Context, prog blocking.Program, bin, tmp string, r *Recording) {
	p, err := start(ctx, prog.Truth.Name, bin, tmp, args(prog, 10*time.Minute)...)
	if err != nil {
		r.problem("goroutineleak run: %v", err)
		return
	}
	defer p.kill()
	b, at, err := awaitTrigger(p, prog.Truth)
	if err != nil {
		r.problem("goroutineleak run: %v", err)
		return
	}
	r.add(LeakDump1, at, b)
	time.Sleep(time.Second)
	at = time.Now()
	if b, err = p.dump(); err != nil {
		r.problem("goroutineleak run: %v", err)
		return
	}
	r.add(LeakDump2, at, b)
	at = time.Now()
	if b, err = p.get("/debug/pprof/goroutineleak"); err != nil {
		r.problem("goroutineleak run: %v", err)
		return
	}
	r.add(LeakProfile, at, b)
}

// timeoutRun lets a test kernel run into its own -test.timeout, as `go
// test -timeout` would, after checking the bug triggered first.
func timeoutRun(ctx context.Context, prog blocking.Program, bin, tmp string, r *Recording) {
	started := time.Now()
	p, err := start(ctx, prog.Truth.Name, bin, tmp, args(prog, testTimeout)...)
	if err != nil {
		r.problem("timeout run: %v", err)
		return
	}
	defer p.kill()
	if _, _, err := awaitTrigger(p, prog.Truth); err != nil {
		r.problem("timeout run: %v", err)
		return
	}
	b, err := p.waitExit(time.Until(started.Add(testTimeout + time.Minute)))
	if err != nil {
		r.problem("timeout run: %v", err)
		return
	}
	r.add(TestTimeout, time.Now(), b)
}

// asleepRun runs the program without the hook and, for a test kernel,
// without a test timeout (-test.timeout=0), as `go test -timeout 0` would:
// a program whose goroutines all block is then killed by the runtime's
// deadlock detector, and its "all goroutines are asleep" traceback is
// recorded. Programs with a timer, a network poller or a live goroutine
// keep running and record nothing (not a problem: the form is optional).
func asleepRun(ctx context.Context, prog blocking.Program, bin, tmp string, r *Recording) {
	dir, err := os.MkdirTemp(tmp, prog.Truth.Name+"-alone-")
	if err != nil {
		r.problem("all-asleep run: %v", err)
		return
	}
	b, err := runAlone(ctx, bin, dir, asleepWait, args(prog, 0)...)
	if err != nil {
		r.problem("all-asleep run: %v", err)
		return
	}
	if bytes.Contains(b, []byte("all goroutines are asleep")) {
		r.add(AllAsleep, time.Now(), b)
	}
}
