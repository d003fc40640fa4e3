package corpus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/version"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// suiteHook is added to each suite program: the goroutineleak profile's
// WriteTo takes one debug=2 goroutine dump first (to the file named by
// $LEAKSCOPE_DUMP), before any goroutineleak profile is collected, so
// the dump has none of the runtime's "(leaked)" marks. Concurrent
// writers wait, runnable, until the dump is taken. Under
// $LEAKSCOPE_QUIT the caller sleeps there instead while another
// goroutine sends the process SIGQUIT: the runtime's traceback of every
// goroutine (runtime frames, goexit and all) is the one input.
const suiteHook = `package main

// Added by leakscope's suite harness (dev/corpus).

import (
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"syscall"
	"time"
)

type leakscopeProfile struct{ p *pprof.Profile }

var leakscopeState atomic.Int32 // 0: no dump yet, 1: dumping, 2: dumped

func leakscopeLookup(p *pprof.Profile) *leakscopeProfile { return &leakscopeProfile{p} }

func (l *leakscopeProfile) WriteTo(w io.Writer, debug int) error {
	if leakscopeState.CompareAndSwap(0, 1) {
		if os.Getenv("LEAKSCOPE_QUIT") != "" {
			go func() {
				time.Sleep(20 * time.Millisecond)
				syscall.Kill(os.Getpid(), syscall.SIGQUIT)
			}()
			for {
				time.Sleep(time.Hour)
			}
		}
		if path := os.Getenv("LEAKSCOPE_DUMP"); path != "" {
			if f, err := os.Create(path); err == nil {
				pprof.Lookup("goroutine").WriteTo(f, 2)
				f.Close()
			}
		}
		leakscopeState.Store(2)
	}
	for leakscopeState.Load() != 2 {
		runtime.Gosched()
	}
	return l.p.WriteTo(w, debug)
}
`

// suiteTest makes a suite program a test binary too, as leak kernels
// often are: TestMain runs the tests on a goroutine of their own and
// sleeps, and the one test runs the case $LEAKSCOPE_CASE names.
const suiteTest = `package main

// Added by leakscope's suite harness (dev/corpus).

import (
	"os"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	go func() { os.Exit(m.Run()) }()
	time.Sleep(time.Hour)
}

func TestLeakscopeCase(t *testing.T) {
	f := cmds[os.Getenv("LEAKSCOPE_CASE")]
	if f == nil {
		t.Fatalf("unknown case %q", os.Getenv("LEAKSCOPE_CASE"))
	}
	f()
}
`

// suiteModule is the module path the suite is built in: a test binary
// names package main's functions by it.
const suiteModule = "leaksuite"

// lookupCall is the suite's goroutineleak lookup, wrapped by the hook.
const lookupCall = `pprof.Lookup("goroutineleak")`

// BuildSuite copies one suite program from the Go root into dir/src,
// wraps its goroutineleak lookups (same lines, so the frames name the
// copied files at their lines) and builds it with toolchain (a
// GOTOOLCHAIN value; "local" is the installed Go) and, where that Go
// still has it as an experiment, GOEXPERIMENT=goroutineleakprofile, as
// the Go test does; for FormTestTraceback, as a test binary (suiteTest).
func BuildSuite(ctx context.Context, goroot, suiteDir, dir string, form SuiteForm, toolchain string) (string, error) {
	src := filepath.Join(dir, "src", filepath.Base(suiteDir))
	if err := copySuite(filepath.Join(SuiteRoot(goroot), suiteDir), src); err != nil {
		return "", err
	}
	extra := map[string]string{"zz_leakscope_hook.go": suiteHook, "go.mod": "module " + suiteModule + "\n\ngo 1.26\n"}
	build := []string{"build"}
	if form == FormTestTraceback {
		extra["zz_leakscope_test.go"] = suiteTest
		build = []string{"test", "-c"}
	}
	for name, text := range extra {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	bin := filepath.Join(dir, filepath.Base(suiteDir))
	cmd := exec.CommandContext(ctx, "go", append(build, "-o", bin, ".")...)
	cmd.Dir = src
	env, err := suiteBuildEnv(ctx, src, toolchain)
	if err != nil {
		return "", err
	}
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s with GOTOOLCHAIN=%s: %w\n%s", suiteDir, toolchain, err, out)
	}
	return bin, nil
}

// suiteBuildEnv is the environment that builds the suite in src with
// toolchain: GOEXPERIMENT=goroutineleakprofile before Go 1.27, which
// has the profile always and refuses the experiment's name.
func suiteBuildEnv(ctx context.Context, src, toolchain string) ([]string, error) {
	env := append(os.Environ(), "GOTOOLCHAIN="+toolchain, "GOWORK=off", "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	cmd := exec.CommandContext(ctx, "go", "env", "GOVERSION")
	cmd.Dir, cmd.Env = src, env
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOVERSION with GOTOOLCHAIN=%s: %w", toolchain, err)
	}
	if v := strings.TrimSpace(string(out)); version.Compare(v, "go1.27") < 0 {
		env = append(env, "GOEXPERIMENT=goroutineleakprofile")
	}
	return env, nil
}

// copySuite copies the Go files of one suite directory (not its
// subdirectories), wrapping each goroutineleak lookup.
func copySuite(from, to string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	wrapped := 0
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		text := string(b)
		wrapped += strings.Count(text, lookupCall)
		text = strings.ReplaceAll(text, lookupCall, "leakscopeLookup("+lookupCall+")")
		if err := os.WriteFile(filepath.Join(to, e.Name()), []byte(text), 0o644); err != nil {
			return err
		}
	}
	if wrapped == 0 {
		return fmt.Errorf("%s: no %s to wrap", from, lookupCall)
	}
	return nil
}

// SuiteRun is what one run of a case left: the dump taken before the
// goroutineleak profile, and the program's output (the profile, debug=2).
type SuiteRun struct {
	Dump, Output string
	// DumpTime is when the dump file was written.
	DumpTime time.Time
}

// suiteRunTimeout ends a run that never finishes.
const suiteRunTimeout = 2 * time.Minute

// SuiteForm is the input a suite run leaves for leakscope.
type SuiteForm string

const (
	// FormDump is one debug=2 goroutine dump, then the runtime's
	// goroutineleak profile (the program's output).
	FormDump SuiteForm = "dump"
	// FormTraceback is the runtime's SIGQUIT traceback, taken at the
	// same point while the goroutine that would write the profile
	// sleeps; no profile of the runtime's is written.
	FormTraceback SuiteForm = "traceback"
	// FormTestTraceback is the same traceback of the case run as a Go
	// test whose TestMain runs the tests on a goroutine and sleeps: the
	// test runner's goroutines are in it too.
	FormTestTraceback SuiteForm = "test-traceback"
)

// RunSuiteCase runs one case of a built suite program once, as the Go
// test does (GODEBUG=asyncpreemptoff=1, GOMAXPROCS=1 for simple cases),
// leaving its input of the form at dumpPath.
func RunSuiteCase(ctx context.Context, bin string, c SuiteCase, dumpPath string, form SuiteForm) (SuiteRun, error) {
	ctx, cancel := context.WithTimeout(ctx, suiteRunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, c.Name)
	if form == FormTestTraceback {
		cmd = exec.CommandContext(ctx, bin, "-test.run=^TestLeakscopeCase$")
	}
	cmd.Env = append(os.Environ(), "GODEBUG=asyncpreemptoff=1", "GOEXPERIMENT=goroutineleakprofile", "LEAKSCOPE_DUMP="+dumpPath, "LEAKSCOPE_CASE="+c.Name)
	if c.Simple {
		cmd.Env = append(cmd.Env, "GOMAXPROCS=1")
	}
	if form != FormDump {
		return runQuit(cmd, c, dumpPath)
	}
	out, err := cmd.Output()
	if err != nil {
		return SuiteRun{}, fmt.Errorf("run %s: %w", c.Name, err)
	}
	if err := os.WriteFile(dumpPath+".out", out, 0o644); err != nil {
		return SuiteRun{}, err
	}
	run, err := ReadSuiteRun(dumpPath)
	if errors.Is(err, fs.ErrNotExist) {
		return SuiteRun{}, fmt.Errorf("run %s: no dump was taken (the program never wrote its profile)", c.Name)
	}
	return run, err
}

// runQuit runs a case that sends itself SIGQUIT and keeps its traceback
// at dumpPath (the runtime exits with status 2 after printing it).
func runQuit(cmd *exec.Cmd, c SuiteCase, dumpPath string) (SuiteRun, error) {
	cmd.Env = append(cmd.Env, "LEAKSCOPE_QUIT=1", "GOTRACEBACK=")
	var tb bytes.Buffer
	cmd.Stderr = &tb
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(tb.String(), "SIGQUIT") {
		return SuiteRun{}, fmt.Errorf("run %s: no SIGQUIT traceback (%v)", c.Name, err)
	}
	if err := os.WriteFile(dumpPath, tb.Bytes(), 0o644); err != nil {
		return SuiteRun{}, err
	}
	if err := os.WriteFile(dumpPath+".out", nil, 0o644); err != nil {
		return SuiteRun{}, err
	}
	return ReadSuiteRun(dumpPath)
}

// ReadSuiteRun reads a run kept at dumpPath: the dump, and beside it
// (dumpPath + ".out") the program's output.
func ReadSuiteRun(dumpPath string) (SuiteRun, error) {
	out, err := os.ReadFile(dumpPath + ".out")
	if err != nil {
		return SuiteRun{}, err
	}
	dump, err := os.ReadFile(dumpPath)
	if err != nil {
		return SuiteRun{}, err
	}
	fi, err := os.Stat(dumpPath)
	if err != nil {
		return SuiteRun{}, err
	}
	return SuiteRun{Dump: string(dump), Output: string(out), DumpTime: fi.ModTime()}, nil
}
