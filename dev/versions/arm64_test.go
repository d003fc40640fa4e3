package versions

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/samples"
)

// TestArm64 captures an arm64 build of the target with an arm64 build of
// leakscope, both run under qemu-user on an amd64 host (natively on an
// arm64 one): pprof, dumps, traces, goroutineleak and the report pass the
// matrix's checks, and eBPF, written for amd64 only, says it is not
// supported there while the capture goes on.
func TestArm64(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-builds leakscope and captures a process under emulation")
	}
	var emu []string
	switch runtime.GOARCH {
	case "arm64":
	case "amd64":
		q, err := exec.LookPath("qemu-aarch64")
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("qemu-aarch64 not found: make deps installs Debian's qemu-user")
			}
			t.Skip("qemu-aarch64 not found (Debian's qemu-user; make deps installs it)")
		}
		emu = []string{q}
	default:
		t.Skipf("no way to run arm64 binaries on %s", runtime.GOARCH)
	}
	tc := Toolchains[len(Toolchains)-1]
	dir, err := TargetDir()
	if err != nil {
		t.Fatal(err)
	}
	target, err := Build(t.Context(), Spec{Dir: dir, Toolchain: tc, Mode: Plain, Arch: "arm64"})
	if err != nil {
		t.Fatal(err)
	}
	leakscope := buildLeakscope(t, "arm64")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	argv := append(emu, target)
	p, err := samples.StartBinary(ctx, argv[0], argv[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	// Under emulation the first request translates net/http's code: it
	// can take longer than capture's check that the URL serves pprof.
	if err := warmUp(p.URL+"/debug/pprof/", 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "arm64.lsb")
	argv = append(emu, leakscope, "capture", "--pid", strconv.Itoa(p.PID), "--url", p.URL, "--duration", "0",
		"--interval", captureEvery.String(), "--trace-window", windowFor.String(), "--cpu-window", windowFor.String(), "-o", out)
	log := captureCLI(t, argv, out, tc)
	if !strings.Contains(log, "eBPF unavailable") || !strings.Contains(log, "linux/arm64") {
		t.Errorf("capture did not say eBPF is unavailable on arm64:\n%s", log)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("target: %v", err)
	}

	c := readCapture(t, out)
	if s := c.source(bundle.SourceEBPF); s.Status != bundle.StatusUnavailable || !strings.Contains(s.Detail, "not supported") || !strings.Contains(s.Detail, "linux/arm64") {
		t.Errorf("ebpf source %q %q, want unavailable: not supported on linux/arm64", s.Status, s.Detail)
	}
	t.Run("pprof", func(t *testing.T) { checkPprof(t, c) })
	t.Run("dump", func(t *testing.T) { checkDumps(t, c) })
	t.Run("trace", func(t *testing.T) { checkTrace(t, c, tc) })
	t.Run("goroutineleak", func(t *testing.T) { checkLeakProfile(t, c, tc) })
	t.Run("report", func(t *testing.T) { checkReport(t, c) })
}

// buildLeakscope cross-builds the leakscope command for arch.
func buildLeakscope(t *testing.T, arch string) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "leakscope")
	cmd := exec.CommandContext(t.Context(), goCommand(), "build", "-o", exe, "./cmd/leakscope")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOARCH="+arch, "CGO_ENABLED=0")
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build leakscope for %s: %v\n%s", arch, err, out)
	}
	t.Logf("leakscope for %s built in %v", arch, time.Since(start).Round(time.Millisecond))
	return exe
}

// captureCLI runs a `leakscope capture` command line until the bundle at
// out holds enough of every source, then interrupts it as Ctrl-C would,
// and returns its output.
func captureCLI(t *testing.T, argv []string, out, toolchain string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	// Under emulation closing the bundle outlasts the second a signal
	// leaves a command before it exits where it stands.
	cmd.Env = append(os.Environ(), "LEAKSCOPE_STOP_GRACE=2m")
	var log lockedBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var err error
	go func() {
		err = cmd.Wait()
		close(done)
	}()
	waitEnough(t, out, toolchain, done)
	cmd.Process.Signal(os.Interrupt)
	<-done
	t.Logf("%s:\n%s", strings.Join(argv, " "), log.String())
	if err != nil {
		t.Fatalf("capture: %v", err)
	}
	return log.String()
}

// warmUp requests url once, waiting up to timeout for a 200 answer.
func warmUp(url string, timeout time.Duration) error {
	c := &http.Client{Timeout: timeout}
	resp, err := c.Get(url)
	if err != nil {
		return fmt.Errorf("warm up the target: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("warm up the target: %s answered %s", url, resp.Status)
	}
	return nil
}
