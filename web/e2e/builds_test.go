package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leakscope/leakscope/capture"
)

// TestFleetBuilds builds one real service (testdata/buildsvc) twice from
// a git repository of its own — a healthy commit, then one that leaks a
// goroutine per poll — captures the leaky build on two nodes and the
// healthy one on one, uploads the three, and reads the fleet view in
// headless Chromium (builds.test.mjs): the leak's row must say it is
// present in every capture of the leaky build's vcs.revision and absent
// in the healthy one's, as GET /api/fleet says, with each revision the
// one git gave.
func TestFleetBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped with -short")
	}
	ctx, node, chromium, tmp, bin := browserSetup(t)
	healthy, leaky := buildTwice(t, ctx, tmp)
	url := startServe(t, ctx, bin, tmp)
	var wg sync.WaitGroup
	dirs := make([]string, 3)
	for i, c := range []struct{ exe, node string }{{leaky.exe, "node-a"}, {leaky.exe, "node-b"}, {healthy.exe, "node-a"}} {
		wg.Go(func() { dirs[i] = captureBuild(t, ctx, c.exe, c.node, filepath.Join(tmp, fmt.Sprintf("cap%d.lsb", i))) })
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, d := range dirs {
		upload(t, url, packed(t, d, strings.TrimSuffix(d, ".lsb")+".tar.zst"))
	}
	shots, _ := filepath.Abs("screenshots")
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "builds.test.mjs")
	cmd.Env = append(os.Environ(), "LEAKSCOPE_URL="+url, "LEAKSCOPE_SCREENSHOTS="+shots, "CHROMIUM="+chromium,
		"LEAKSCOPE_LEAKY_REV="+leaky.rev, "LEAKSCOPE_HEALTHY_REV="+healthy.rev)
	outb, err := cmd.CombinedOutput()
	t.Logf("node --test builds.test.mjs:\n%s", outb)
	if err != nil {
		t.Fatalf("fleet builds tests failed: %v", err)
	}
}

// build is one build of buildsvc: its executable and git revision.
type build struct{ exe, rev string }

// buildTwice commits testdata/buildsvc to a new git repository and builds
// it (healthy), then commits it with the leak switched on and builds it
// again; both executables are named buildsvc, as one service's are.
func buildTwice(t *testing.T, ctx context.Context, tmp string) (healthy, leaky build) {
	t.Helper()
	repo := filepath.Join(tmp, "repo")
	if err := os.CopyFS(repo, os.DirFS("testdata/buildsvc")); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "user.name=test", "-c", "user.email=test@example.com"}, args...)...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	one := func(name, msg string) build {
		git("add", ".")
		git("commit", "-q", "-m", msg)
		exe := filepath.Join(tmp, name, "buildsvc")
		cmd := exec.CommandContext(ctx, "go", "build", "-buildvcs=true", "-o", exe, ".")
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, out)
		}
		return build{exe, git("rev-parse", "HEAD")}
	}
	git("init", "-q")
	healthy = one("healthy", "buildsvc")
	src := filepath.Join(repo, "main.go")
	code, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	code = []byte(strings.Replace(string(code), "const leaky = false", "const leaky = true", 1))
	if err := os.WriteFile(src, code, 0o644); err != nil {
		t.Fatal(err)
	}
	leaky = one("leaky", "buildsvc: poll without waiting")
	return healthy, leaky
}

// captureBuild runs exe, captures it for 8 s as node into the bundle dir
// and returns dir ("" when it failed: the error is reported).
func captureBuild(t *testing.T, ctx context.Context, exe, node, dir string) string {
	cmd := exec.CommandContext(ctx, exe)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Error(err)
		return ""
	}
	if err := cmd.Start(); err != nil {
		t.Error(err)
		return ""
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		t.Errorf("%s said %q (%v)", exe, line, err)
		return ""
	}
	if _, err := capture.Run(ctx, capture.Options{PID: cmd.Process.Pid, URL: base, Out: dir, Node: node, Duration: 8 * time.Second,
		Interval: 2 * time.Second, TraceWindow: time.Second, NoEBPF: true, Tool: "e2e"}, io.Discard); err != nil {
		t.Errorf("capture %s: %v", exe, err)
		return ""
	}
	return dir
}
