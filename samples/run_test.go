package samples

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseListening(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"listening on http://127.0.0.1:8080\n", "http://127.0.0.1:8080"},
		{"listening on http://[::1]:9000/\n", "http://[::1]:9000"},
		{"listening on http://localhost:1", "http://localhost:1"},
		{"", ""},
		{"hello\n", ""},
		{"listening on 127.0.0.1:80\n", ""},
		{"listening on http://127.0.0.1\n", ""},
		{"listening on https://127.0.0.1:1\n", ""},
		{"listening on http://127.0.0.1:1/debug\n", ""},
	} {
		got, err := parseListening(tc.in)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("parseListening(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestRoot(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if root != wd {
		t.Errorf("Root() = %s, want %s", root, wd)
	}
}

func TestStartErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	_, err := Start(t.Context(), filepath.Join("testdata", "nobuild"))
	if err == nil || !strings.Contains(err.Error(), "build sample") || !strings.Contains(err.Error(), "undefined") {
		t.Errorf("Start(nobuild) = %v, want a build error with the compiler output", err)
	}
	_, err = Start(t.Context(), filepath.Join("testdata", "badline"))
	if err == nil || !strings.Contains(err.Error(), `"hello from badline"`) || !strings.Contains(err.Error(), "stderr on the way out") {
		t.Errorf("Start(badline) = %v, want the bad first line and the stderr tail", err)
	}
}

func TestStartStop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a sample")
	}
	p, err := Start(t.Context(), "bursty", "-rate", "10")
	if err != nil {
		t.Fatal(err)
	}
	if p.PID <= 0 || !strings.HasPrefix(p.URL, "http://127.0.0.1:") {
		t.Errorf("Start = pid %d url %q", p.PID, p.URL)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	select {
	case <-p.Exited():
	default:
		t.Error("Exited not closed after Stop")
	}
	if err := p.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if !p.Cmd.ProcessState.Success() {
		t.Errorf("sample exit status %v after SIGTERM, want 0", p.Cmd.ProcessState)
	}
}

// TestBuildShared builds a sample twice, the second time as a new process
// would (after Cleanup): the binary kept in the shared cache is not linked
// again, and each build hands out a file of its own.
func TestBuildShared(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a sample")
	}
	t.Setenv("LEAKSCOPE_SAMPLE_CACHE", t.TempDir())
	if err := Cleanup(); err != nil { // builds of earlier tests, elsewhere
		t.Fatal(err)
	}
	defer Cleanup()
	abs, err := filepath.Abs("bursty")
	if err != nil {
		t.Fatal(err)
	}
	shared := sharedBinary(abs)
	first, err := Build(t.Context(), "bursty")
	if err != nil {
		t.Fatal(err)
	}
	st1, err := os.Stat(shared)
	if err != nil {
		t.Fatalf("no shared binary: %v", err)
	}
	if err := Cleanup(); err != nil {
		t.Fatal(err)
	}
	second, err := Build(t.Context(), "bursty")
	if err != nil {
		t.Fatal(err)
	}
	st2, err := os.Stat(shared)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(st1, st2) { // cmd/go replaces a file it links again
		t.Errorf("shared binary linked again")
	}
	if first == second || first == shared || second == shared {
		t.Errorf("builds %q and %q, shared %q: want a file of each build's own", first, second, shared)
	}
	if _, err := os.Stat(second); err != nil {
		t.Errorf("second build: %v", err)
	}
}
