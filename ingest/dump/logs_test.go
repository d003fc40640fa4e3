package dump

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// These tests read what real programs write, in the forms users have it:
// a crash at the end of a long log, inside container-runtime envelopes,
// go test output, race reports.

// runOutput runs cmd and returns what it wrote to stderr (and stdout when
// both is set), checking it failed with the given exit code.
func runOutput(t *testing.T, cmd *exec.Cmd, code int, both bool) []byte {
	t.Helper()
	var out bytes.Buffer
	cmd.Stderr = &out
	if both {
		cmd.Stdout = &out
	}
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); (code == 0) != (err == nil) || code != 0 && (!ok || ee.ExitCode() != code) {
		t.Fatalf("%v: %v, want exit status %d\n%s", cmd.Args, err, code, out.Bytes())
	}
	return out.Bytes()
}

// logPanic runs dumpprog in mode logpanic: 1500 log lines, then a panic
// with every goroutine (GOTRACEBACK=all).
func logPanic(t *testing.T) []byte {
	t.Helper()
	cmd := exec.Command(buildProg(t), "logpanic")
	cmd.Env = append(os.Environ(), "GOTRACEBACK=all", "GODEBUG=tracebacklabels=1")
	out := runOutput(t, cmd, 2, false)
	if i := bytes.Index(out, []byte("panic: ")); i < 64<<10 {
		t.Fatalf("the panic starts at byte %d, want past the first 64 KiB", i)
	}
	return out
}

// checkAll parses data and checks it yields every goroutine header of
// want (the plain traceback), complete, with the roles dumpprog reported.
func checkAll(t *testing.T, name string, data, want []byte) (*Reader, []*Goroutine) {
	t.Helper()
	rd, gs := parseAll(t, data)
	if rd.Truncated() {
		t.Errorf("%s: reported truncated: %s", name, rd.TruncationDetail())
	}
	if n := countHeaders(want); len(gs) != n || n < 17 {
		t.Errorf("%s: parsed %d goroutines, the traceback has %d headers", name, len(gs), n)
	}
	checkGoroutines(t, gs, parseReport(t, want))
	return rd, gs
}

// TestRealLogThenPanic reads a panic that comes after 100 KiB of log, as
// `kubectl logs --previous` shows it, also without the final newline and
// with "exit status 2" after it as go run prints.
func TestRealLogThenPanic(t *testing.T) {
	out := logPanic(t)
	checkAll(t, "log", out, out)
	noNL := append(bytes.TrimSuffix(out, []byte("\n")), []byte("\nexit status 2")...)
	checkAll(t, "exit status without newline", noNL, out)
	if !Looks(out) {
		// Looks only sees the first bytes; the ingest path must not
		// depend on it (see ingest's detection test).
		t.Log("Looks does not recognise the log from its start, as expected")
	}
}

// cri wraps each line as containerd writes a container's log: timestamp,
// stream, F for a full line or P for a part, splitting lines longer than
// maxPart.
func cri(data []byte, stream string, maxPart int) []byte {
	var b bytes.Buffer
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		ts := t0.Add(time.Duration(i) * 1234567).Format(time.RFC3339Nano)
		for len(line) > maxPart {
			fmt.Fprintf(&b, "%s %s P %s\n", ts, stream, line[:maxPart])
			line = line[maxPart:]
		}
		fmt.Fprintf(&b, "%s %s F %s\n", ts, stream, line)
	}
	return b.Bytes()
}

// docker wraps each line as Docker's json-file log driver does.
func docker(data []byte, stream string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if line != "" {
			enc.Encode(map[string]string{"log": line, "stream": stream, "time": "2026-12-01T08:00:00.000000001Z"})
		}
	}
	return b.Bytes()
}

// interleave mixes a second stream's lines between a's, one every few.
func interleave(a, b []byte) []byte {
	al := bytes.SplitAfter(a, []byte("\n"))
	bl := bytes.SplitAfter(b, []byte("\n"))
	var out bytes.Buffer
	for i, l := range al {
		out.Write(l)
		if i%3 == 1 && len(bl) > 0 {
			out.Write(bl[0])
			bl = bl[1:]
		}
	}
	for _, l := range bl {
		out.Write(l)
	}
	return out.Bytes()
}

// TestRealContainerLogs reads the same crash log as container runtimes
// store it: CRI lines (long ones split into P parts), CRI with stdout
// lines of another writer between the stderr lines, Docker's json-file,
// and kubectl logs --timestamps.
func TestRealContainerLogs(t *testing.T) {
	out := logPanic(t)
	stdout := bytes.Repeat([]byte(`{"level":"info","msg":"request served","path":"/healthz"}`+"\n"), 400)
	var stamped bytes.Buffer
	for _, line := range strings.SplitAfter(string(out), "\n") {
		if line != "" {
			stamped.WriteString("2026-12-01T08:00:00.123456789Z " + line)
		}
	}
	for name, data := range map[string][]byte{
		"cri":             cri(out, "stderr", 100),
		"cri interleaved": interleave(cri(out, "stderr", 16<<10), cri(stdout, "stdout", 16<<10)),
		"docker":          docker(out, "stderr"),
		"timestamps":      stamped.Bytes(),
	} {
		t.Run(name, func(t *testing.T) {
			checkAll(t, name, data, out)
		})
	}
}

// TestRealCrashTraceback reads SIGQUIT output at GOTRACEBACK=crash: every
// thread's stack ("goroutine 0") is followed by its register dump with no
// blank line between.
func TestRealCrashTraceback(t *testing.T) {
	data := sigquitAt(t, "crash")
	if !regexp.MustCompile(`(?m)^\t.*pc=0x[0-9a-f]+\nr[a-z0-9]+ +0x`).Match(data) {
		t.Fatalf("no register dump right after a stack: not the crash format\n%s", data)
	}
	rd, gs := parseAll(t, data)
	zero, user := 0, 0
	for _, g := range gs {
		switch {
		case g.ID == 0:
			zero++
		case g.CreatedBy == nil || !strings.HasPrefix(g.CreatedBy.Function, "runtime."):
			user++
		}
	}
	zeroHeaders := 0
	for _, m := range headerRE.FindAllSubmatch(data, -1) {
		if string(m[1]) == "0" {
			zeroHeaders++
		}
	}
	rep := parseReport(t, data)
	if zero != zeroHeaders || zero == 0 || user != rep.numGoroutine || rd.Truncated() {
		t.Fatalf("parsed %d thread stacks of %d, %d user goroutines of %d (truncated %v %s)", zero, zeroHeaders, user, rep.numGoroutine, rd.Truncated(), rd.TruncationDetail())
	}
	checkGoroutines(t, gs, rep)
}

// goTest runs go test in testdata/gotest and returns its output.
func goTest(t *testing.T, args ...string) []byte {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go test")
	}
	cmd := exec.Command("go", append([]string{"test"}, args...)...)
	cmd.Dir = filepath.Join("testdata", "gotest")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	code := 1
	if strings.Contains(strings.Join(args, " "), "TestLogStack") {
		code = 0
	}
	return runOutput(t, cmd, code, true)
}

// TestRealGoTestTimeout reads go test's panic at -timeout: the hanging
// test's goroutine is there, and the last block, ended by go test's FAIL
// line, is complete.
func TestRealGoTestTimeout(t *testing.T) {
	out := goTest(t, "-run", "TestHang", "-timeout", "1s", ".")
	if !bytes.Contains(out, []byte("panic: test timed out after 1s")) {
		t.Fatalf("not a timeout panic:\n%s", out)
	}
	rd, gs := parseAll(t, out)
	if rd.Truncated() || len(gs) != countHeaders(out) {
		t.Fatalf("%d goroutines of %d headers, truncated %v %s", len(gs), countHeaders(out), rd.Truncated(), rd.TruncationDetail())
	}
	var hang, inner bool
	for _, g := range gs {
		hang = hang || hasFunction(g, "example.com/gotest.TestHang") && g.State == "chan receive"
		inner = inner || hasFunction(g, "example.com/gotest.TestHang.func1")
	}
	if !hang || !inner {
		t.Errorf("the hanging test's goroutines are missing (test %v, its goroutine %v)", hang, inner)
	}
}

// TestRealTestLog reads a goroutine dump a test logged with t.Log: the
// first line after "file_test.go:N: ", the others indented.
func TestRealTestLog(t *testing.T) {
	out := goTest(t, "-v", "-run", "TestLogStack", ".")
	rd, gs := parseAll(t, out)
	if rd.Truncated() || len(gs) < 3 {
		t.Fatalf("%d goroutines, truncated %v %s\n%s", len(gs), rd.Truncated(), rd.TruncationDetail(), out)
	}
	var sender bool
	for _, g := range gs {
		if len(g.Frames) == 0 || g.Frames[0].File == "" {
			t.Errorf("goroutine %d: frames %+v", g.ID, g.Frames)
		}
		sender = sender || hasFunction(g, "example.com/gotest.TestLogStack.func1") && g.CreatorGoid != 0
	}
	if !sender {
		t.Errorf("the test's sending goroutine is missing: %+v", gs)
	}
	if rd.interrupted != 0 {
		t.Errorf("notes: %s", rd.Notes())
	}
}

// TestRealRace reads the race detector's report of go run -race.
func TestRealRace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with -race")
	}
	cmd := exec.Command("go", "run", "-race", ".")
	cmd.Dir = filepath.Join("testdata", "racer")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "CGO_ENABLED=1")
	out := runOutput(t, cmd, 1, false)
	if !bytes.Contains(out, []byte("WARNING: DATA RACE")) {
		t.Fatalf("no race report:\n%s", out)
	}
	rd, gs := parseAll(t, out)
	races := rd.Races()
	if len(gs) != 0 || len(races) != 1 || rd.RaceCount() != 1 {
		t.Fatalf("%d goroutines, %d races\n%s", len(gs), len(races), out)
	}
	r := races[0]
	if !r.Complete || len(r.Accesses) != 2 {
		t.Fatalf("race %+v", r)
	}
	ops := r.Accesses[0].Op + "/" + r.Accesses[1].Op
	if ops != "read/previous write" && ops != "write/previous write" && ops != "write/previous read" {
		t.Errorf("accesses %s", ops)
	}
	for _, a := range r.Accesses {
		if a.Addr == 0 || a.Goid == 0 || len(a.Frames) != 2 || a.Frames[0].Function != "main.record" || a.Frames[0].Line != 12 ||
			!strings.HasSuffix(a.Frames[0].File, "racer/main.go") || len(a.CreatedAt) != 1 || a.CreatedAt[0].Function != "main.main" ||
			(a.State != "running" && a.State != "finished") {
			t.Errorf("access %+v", a)
		}
	}
	if r.Accesses[0].Addr != r.Accesses[1].Addr || r.Accesses[0].Goid == r.Accesses[1].Goid {
		t.Errorf("accesses %+v", r.Accesses)
	}
}

// TestCutInsideHeader cuts a real dump inside a goroutine's header line
// ("...\n\ngoroutine 55"): it is truncated, not complete.
func TestCutInsideHeader(t *testing.T) {
	prog := buildProg(t)
	out, err := exec.Command(prog, "dump").Output()
	if err != nil {
		t.Fatal(err)
	}
	whole := countHeaders(out)
	for _, cut := range []string{"goroutine ", "gorout", "goroutine 1 [chan rec", "goroutine 1 [chan receive]:"} {
		i := bytes.LastIndex(out, []byte("\n\ngoroutine "))
		data := append(append([]byte(nil), out[:i+2]...), cut...)
		rd, gs := parseAll(t, data)
		if !rd.Truncated() || len(gs) != whole-1 || !strings.Contains(rd.TruncationDetail(), "header") && !strings.Contains(rd.TruncationDetail(), "cut off") {
			t.Errorf("cut at %q: %d goroutines of %d, truncated %v %q", cut, len(gs), whole, rd.Truncated(), rd.TruncationDetail())
		}
	}
}

// TestRealDebug2Go127 parses the debug=2 dump of dumpprog built with Go
// 1.27, whose headers carry pprof labels after the brackets ("[chan
// receive] {app: dumpprog, team: leaks}:"). make deps fetches the
// toolchain; without it (offline, outside CI) the test is skipped.
func TestRealDebug2Go127(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with Go 1.27")
	}
	exe := filepath.Join(t.TempDir(), "dumpprog127")
	build := exec.Command("go", "build", "-o", exe, "testdata/dumpprog.go")
	build.Env = append(os.Environ(), "GOTOOLCHAIN=go1.27.3")
	if out, err := build.CombinedOutput(); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("no Go 1.27.3 toolchain here: %v\n%s", err, out)
		}
		t.Fatalf("build with Go 1.27.3: %v\n%s", err, out)
	}
	cmd := exec.Command(exe, "dump")
	// Go 1.27 prints labels by default, but not for a module that says go
	// 1.26, as this one does.
	cmd.Env = append(os.Environ(), "GODEBUG=tracebacklabels=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("dumpprog: %v\n%s", err, stderr.Bytes())
	}
	if !bytes.Contains(stdout.Bytes(), []byte("] {app: dumpprog, team: leaks}:")) {
		t.Fatalf("no Go 1.27 label form in the dump:\n%s", stdout.Bytes())
	}
	rep := parseReport(t, stderr.Bytes())
	rd, gs := parseAll(t, stdout.Bytes())
	if rd.Truncated() || rd.Notes() != "" || len(gs) != countHeaders(stdout.Bytes()) {
		t.Fatalf("%d goroutines of %d headers, truncated %v, notes %q", len(gs), countHeaders(stdout.Bytes()), rd.Truncated(), rd.Notes())
	}
	checkGoroutines(t, gs, rep)
}
