package dump

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// progPath is the dumpprog binary built by TestMain.
var progPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dumpprog")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	progPath = filepath.Join(dir, "dumpprog")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildProg builds testdata/dumpprog.go once per test binary.
func buildProg(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(progPath); err == nil {
		return progPath
	}
	if testing.Short() {
		t.Skip("builds and runs a Go program")
	}
	out, err := exec.Command("go", "build", "-o", progPath, "testdata/dumpprog.go").CombinedOutput()
	if err != nil {
		t.Fatalf("build dumpprog: %v\n%s", err, out)
	}
	return progPath
}

// progReport is what dumpprog prints to stderr about itself.
type progReport struct {
	exited       map[int64]bool
	roles        map[string][]int64 // role -> goids
	addrs        map[string]string  // variable -> its address ("0xc000012340")
	numGoroutine int
}

func parseReport(t *testing.T, stderr []byte) progReport {
	t.Helper()
	rep := progReport{exited: map[int64]bool{}, roles: map[string][]int64{}, addrs: map[string]string{}, numGoroutine: -1}
	for _, line := range strings.Split(string(stderr), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "EXITED":
			id, _ := strconv.ParseInt(f[1], 10, 64)
			rep.exited[id] = true
		case len(f) == 3 && f[0] == "ROLE":
			id, _ := strconv.ParseInt(f[2], 10, 64)
			rep.roles[f[1]] = append(rep.roles[f[1]], id)
		case len(f) == 3 && f[0] == "ADDR":
			rep.addrs[f[1]] = f[2]
		case len(f) == 2 && f[0] == "NUMGOROUTINE":
			rep.numGoroutine, _ = strconv.Atoi(f[1])
		}
	}
	if len(rep.exited) != 1 || len(rep.roles) != len(wantStates) || rep.numGoroutine < 17 {
		t.Fatalf("dumpprog report incomplete: %+v\n%s", rep, stderr)
	}
	return rep
}

// wantStates is the state each role's goroutine must show.
var wantStates = map[string]string{
	"chanSend": "chan send", "chanRecv": "chan receive", "chanRecvNil": "chan receive (nil chan)",
	"selectWait": "select", "selectNone": "select (no cases)", "mutexWait": "sync.Mutex.Lock",
	"wgWait": "sync.WaitGroup.Wait", "condWait": "sync.Cond.Wait", "sleeper": "sleep",
	"ioWait": "IO wait", "locked": "chan receive", "labeled": "chan receive", "deep": "chan receive",
	"orphan": "chan receive", "fromWorker": "chan receive", "worker": "chan receive",
}

var headerRE = regexp.MustCompile(`(?m)^goroutine (\d+) .*\](?: \{.*\})?:\r?$`)

// countHeaders counts goroutine header lines with a plain regexp, apart
// from the parser, leaving out "goroutine 0" blocks.
func countHeaders(dump []byte) int {
	n := 0
	for _, m := range headerRE.FindAllSubmatch(dump, -1) {
		if string(m[1]) != "0" {
			n++
		}
	}
	return n
}

// checkGoroutines checks the parsed goroutines against what dumpprog
// reported and returns them by id.
func checkGoroutines(t *testing.T, gs []*Goroutine, rep progReport) map[int64]*Goroutine {
	t.Helper()
	byID := map[int64]*Goroutine{}
	for _, g := range gs {
		if g.ID == 0 {
			continue
		}
		if byID[g.ID] != nil {
			t.Errorf("goroutine %d twice", g.ID)
		}
		byID[g.ID] = g
		if g.WaitMinutes != 0 {
			t.Errorf("goroutine %d waits %d minutes in a fresh program", g.ID, g.WaitMinutes)
		}
		if len(g.Frames) == 0 {
			t.Errorf("goroutine %d has no frames", g.ID)
		}
	}
	for _, g := range byID {
		if g.ID == 1 {
			continue
		}
		if g.CreatedBy == nil || g.CreatorGoid == 0 {
			t.Errorf("goroutine %d has no creator", g.ID)
			continue
		}
		if byID[g.CreatorGoid] == nil && !rep.exited[g.CreatorGoid] {
			t.Errorf("goroutine %d: creator goroutine %d neither in the dump nor known to have exited", g.ID, g.CreatorGoid)
		}
	}
	for role, ids := range rep.roles {
		for _, id := range ids {
			g := byID[id]
			if g == nil {
				t.Errorf("role %s: goroutine %d missing", role, id)
				continue
			}
			if g.State != wantStates[role] {
				t.Errorf("role %s: goroutine %d state %q, want %q", role, id, g.State, wantStates[role])
			}
			if g.LockedToThread != (role == "locked") {
				t.Errorf("role %s: locked to thread = %v", role, g.LockedToThread)
			}
			if wantLabels := map[bool]string{true: "app=dumpprog,team=leaks"}[role == "labeled"]; g.Labels != wantLabels {
				t.Errorf("role %s: labels %q, want %q", role, g.Labels, wantLabels)
			}
			if g.FramesElided != (role == "deep") || (role == "deep" && (g.ElidedFrames < 100 || len(g.Frames) < 100)) {
				t.Errorf("role %s: elided=%v (%d), %d frames", role, g.FramesElided, g.ElidedFrames, len(g.Frames))
			}
			if !hasFunction(g, "main."+role) {
				t.Errorf("role %s: goroutine %d has no frame of main.%s", role, id, role)
			}
		}
	}
	// The object a goroutine blocks on is the first argument word of the
	// blocking frame, as printed.
	for role, want := range map[string][2]string{
		"mutexWait": {"internal/sync.(*Mutex).lockSlow", rep.addrs["mu"]},
		"wgWait":    {"sync.(*WaitGroup).Wait", rep.addrs["wg"]},
	} {
		g := byID[rep.roles[role][0]]
		if g == nil {
			continue
		}
		if got := firstArg(g, want[0]); got != want[1] {
			t.Errorf("role %s: %s receiver %q, want %q", role, want[0], got, want[1])
		}
	}
	for _, id := range rep.roles["orphan"] {
		if g := byID[id]; g != nil && !rep.exited[g.CreatorGoid] {
			t.Errorf("orphan %d: creator %d is not the exited spawner", id, g.CreatorGoid)
		}
	}
	if w, f := byID[rep.roles["worker"][0]], byID[rep.roles["fromWorker"][0]]; w != nil && f != nil && f.CreatorGoid != w.ID {
		t.Errorf("fromWorker's creator is %d, want worker %d", f.CreatorGoid, w.ID)
	}
	return byID
}

// firstArg returns the first argument word of fn's frame in g.
func firstArg(g *Goroutine, fn string) string {
	for _, f := range g.Frames {
		if f.Function == fn {
			w, _, _ := strings.Cut(f.Args, ",")
			return w
		}
	}
	return ""
}

func hasFunction(g *Goroutine, fn string) bool {
	for _, f := range g.Frames {
		if f.Function == fn || strings.HasPrefix(f.Function, fn+".") {
			return true
		}
	}
	return false
}

func parseAll(t *testing.T, data []byte) (*Reader, []*Goroutine) {
	t.Helper()
	rd := NewReader(bytes.NewReader(data))
	var gs []*Goroutine
	for {
		g, err := rd.Next()
		if err == io.EOF {
			return rd, gs
		}
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		gs = append(gs, g.Clone())
	}
}

// TestRealDebug2 parses the debug=2 goroutine dump of a live program.
func TestRealDebug2(t *testing.T) {
	prog := buildProg(t)
	cmd := exec.Command(prog, "dump")
	cmd.Env = append(os.Environ(), "GODEBUG=tracebacklabels=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("dumpprog: %v\n%s", err, stderr.Bytes())
	}
	rep := parseReport(t, stderr.Bytes())
	rd, gs := parseAll(t, stdout.Bytes())
	if rd.Truncated() {
		t.Errorf("complete dump reported truncated: %s", rd.TruncationDetail())
	}
	headers := countHeaders(stdout.Bytes())
	if len(gs) != headers || headers != rep.numGoroutine {
		t.Fatalf("parsed %d goroutines, dump has %d headers, runtime.NumGoroutine %d", len(gs), headers, rep.numGoroutine)
	}
	byID := checkGoroutines(t, gs, rep)
	if g := byID[1]; g == nil || g.State != "running" || g.CreatedBy != nil {
		t.Errorf("main goroutine: %+v", g)
	}
}

// TestRealSIGQUIT parses the traceback a program writes when killed with
// SIGQUIT under GOTRACEBACK=all (the runtime raises it to level system,
// so runtime goroutines and gp=/fp= details appear).
func TestRealSIGQUIT(t *testing.T) {
	out := sigquitTraceback(t)
	rep := parseReport(t, out)
	rd, gs := parseAll(t, out)
	if rd.Truncated() {
		t.Errorf("complete traceback reported truncated: %s", rd.TruncationDetail())
	}
	nonZero, user, zero := 0, 0, 0
	for _, g := range gs {
		if g.ID == 0 {
			zero++
			continue
		}
		nonZero++
		if g.CreatedBy == nil || !strings.HasPrefix(g.CreatedBy.Function, "runtime.") {
			user++
		}
	}
	// Whether the traceback has "goroutine 0" blocks (thread stacks)
	// depends on which thread took the signal; every one it has must be
	// parsed.
	zeroHeaders := 0
	for _, m := range headerRE.FindAllSubmatch(out, -1) {
		if string(m[1]) == "0" {
			zeroHeaders++
		}
	}
	if zero != zeroHeaders {
		t.Errorf("parsed %d goroutine 0 blocks, the traceback has %d", zero, zeroHeaders)
	}
	if headers := countHeaders(out); nonZero != headers || user != rep.numGoroutine {
		t.Fatalf("parsed %d goroutines (%d user), traceback has %d headers, runtime.NumGoroutine %d", nonZero, user, headers, rep.numGoroutine)
	}
	checkGoroutines(t, gs, rep)
	if rd.SkippedLines() == 0 {
		t.Errorf("preamble and register dump were not skipped")
	}
}

// sigquitTraceback runs dumpprog until its goroutines are parked, sends
// SIGQUIT and returns everything it wrote to stderr.
func sigquitTraceback(t *testing.T) []byte {
	t.Helper()
	return sigquitAt(t, "all")
}

// sigquitAt is sigquitTraceback with GOTRACEBACK=gotraceback. At "crash"
// the runtime ends in an abort (no core file is written) instead of exit
// status 2.
func sigquitAt(t *testing.T, gotraceback string) []byte {
	t.Helper()
	prog := buildProg(t)
	cmd := exec.Command(prog, "wait")
	cmd.Env = append(os.Environ(), "GOTRACEBACK="+gotraceback, "GODEBUG=tracebacklabels=1")
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_CORE, &unix.Rlimit{}, nil)
	var out bytes.Buffer
	br := bufio.NewReader(pr)
	for {
		line, err := br.ReadString('\n')
		out.WriteString(line)
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("dumpprog ended before READY: %v\n%s", err, out.Bytes())
		}
		if line == "READY\n" {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(&out, br); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if gotraceback == "crash" {
		return out.Bytes()
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("dumpprog after SIGQUIT: %v, want exit status 2\n%s", err, out.Bytes())
	}
	return out.Bytes()
}
