package e2e

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/leakscope/leakscope/capture"
	"github.com/leakscope/leakscope/samples"
)

// TestHistoryChart records a capture of the ticker-leak sample that
// starts with a history (goroutine and heap profiles read every second
// before it, as the node agent's rolling watch reads them), uploads it,
// and checks in headless Chromium that the overview chart shades the
// history apart from the capture, over every history snapshot
// (history.test.mjs).
func TestHistoryChart(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped with -short")
	}
	ctx, node, chromium, tmp, bin := browserSetup(t)
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	p, err := samples.Start(ctx, filepath.Join(root, "ticker-leak"), "-rate", "50")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	var hist []capture.HistoryFile
	client := capture.NewScrapeClient(0)
	for i := range 5 {
		snap, err := capture.ReadSnapshot(ctx, client, p.URL)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []struct {
			profile string
			data    []byte
		}{{"goroutine", snap.Goroutine}, {"heap", snap.Heap}} {
			path := filepath.Join(tmp, fmt.Sprintf("%s-%d.pb.gz", f.profile, i))
			if err := os.WriteFile(path, f.data, 0o644); err != nil {
				t.Fatal(err)
			}
			hist = append(hist, capture.HistoryFile{Path: path, Profile: f.profile, Time: snap.TS})
		}
		time.Sleep(time.Second)
	}
	dir := filepath.Join(tmp, "history.lsb")
	if _, err := capture.Run(ctx, capture.Options{URL: p.URL, Out: dir, Duration: 6 * time.Second, Interval: 2 * time.Second,
		TraceWindow: time.Second, NoEBPF: true, History: hist, Tool: "e2e"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	p.Stop()

	url := startServe(t, ctx, bin, tmp)
	run(t, ctx, ".", bin, "upload", dir, "--to", url)

	shots, _ := filepath.Abs("screenshots")
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "history.test.mjs")
	cmd.Env = append(os.Environ(), "LEAKSCOPE_URL="+url, "LEAKSCOPE_SCREENSHOTS="+shots, "CHROMIUM="+chromium)
	outb, err := cmd.CombinedOutput()
	t.Logf("node --test history.test.mjs:\n%s", outb)
	if err != nil {
		t.Fatalf("history chart tests failed: %v", err)
	}
}
