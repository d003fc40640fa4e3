package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/capture"
	"github.com/leakscope/leakscope/samples"
)

// TestCaptureFirstAnswer captures a leaky sample with --first-answer: the
// preliminary report is written while the capture runs, says it is
// preliminary and names the planted leak.
func TestCaptureFirstAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("live capture skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "timeout-send")
	truth, err := samples.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := samples.Start(ctx, dir, "-rate", "50")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	// Let the leak build up, so the first dump holds it.
	for {
		tot, err := capture.ReadTotals(ctx, capture.NewScrapeClient(0), p.URL)
		if err != nil {
			t.Fatal(err)
		}
		if tot.Goroutines >= 200 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	tmp := t.TempDir()
	first := filepath.Join(tmp, "first.md")
	var out, errb bytes.Buffer
	args := []string{"capture", "--url", p.URL, "--duration", "4s", "--interval", "2s", "--no-ebpf", "--cpu-window", "0", "--first-answer", first, "-o", filepath.Join(tmp, "c.lsb")}
	if err := run(ctx, args, &out, &errb); err != nil {
		t.Fatalf("capture: %v\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "first answer after") {
		t.Errorf("no first-answer line on stderr:\n%s", errb.String())
	}
	data, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("> **Preliminary:**")) || !bytes.Contains(data, []byte(truth.Leaks[0].Function)) {
		t.Errorf("first answer does not say it is preliminary or does not name %s:\n%.4000s\ncapture stderr:\n%s", truth.Leaks[0].Function, data, errb.String())
	}
}
