package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakscope/leakscope/samples"
)

func TestWorkbench(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped with -short")
	}
	ctx, node, chromium, tmp, bin := browserSetup(t)

	// A real capture of a leaky service.
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	p, err := samples.Start(ctx, filepath.Join(root, "ticker-leak"), "-rate", "50")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "ticker.lsb")
	run(t, ctx, ".", bin, "capture", "--url", p.URL, "--duration", "8s", "--interval", "2s", "--no-ebpf", "-o", dir)
	p.Stop()
	archive := packed(t, dir, filepath.Join(tmp, "ticker.tar.zst"))
	// A committed sample capture with several trace windows and a heap
	// suspect, for the views a short live capture may not exercise.
	sampleArchive := packed(t, filepath.Join(filepath.Dir(root), "cmd", "leakscope", "bundles", "operator-sim.lsb"), filepath.Join(tmp, "operator-sim.tar.zst"))

	// The server, on a free port, with an empty data directory.
	url := startServe(t, ctx, bin, tmp)

	shots, _ := filepath.Abs("screenshots")
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "workbench.test.mjs")
	cmd.Env = append(os.Environ(), "LEAKSCOPE_URL="+url, "LEAKSCOPE_BUNDLE_ARCHIVE="+archive, "LEAKSCOPE_SAMPLE_ARCHIVE="+sampleArchive, "LEAKSCOPE_SCREENSHOTS="+shots, "CHROMIUM="+chromium)
	outb, err := cmd.CombinedOutput()
	t.Logf("node --test workbench.test.mjs:\n%s", outb)
	if err != nil {
		t.Fatalf("end-to-end tests failed: %v", err)
	}
}

func run(t *testing.T, ctx context.Context, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
