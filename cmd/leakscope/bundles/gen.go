//go:build ignore

// Command gen records the committed sample bundles: it runs a few sample
// programs and captures each with `leakscope capture` (pprof, execution
// trace windows and, where privileged, eBPF) for a short while. Given
// sample names as arguments, it records only those.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/leakscope/leakscope/samples"
)

// recordings lists the samples recorded and for how long.
var recordings = []struct {
	sample string
	args   []string
}{
	{"operator-sim", nil},
	{"timeout-send", nil},
	{"cache-pin", nil},
	{"stable-pool", nil},
}

const (
	duration = "24s"
	interval = "6s"
	window   = "2s"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	root, err := samples.Root()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "leakscope-gen")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	defer samples.Cleanup()
	bin := filepath.Join(tmp, "leakscope")
	build := exec.Command("go", "build", "-o", bin, "./cmd/leakscope")
	build.Env = append(os.Environ(), "GOEXPERIMENT=")
	build.Dir = filepath.Dir(root)
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build leakscope: %w", err)
	}
	// Build the samples with the runtime's goroutine leak profile, so the
	// bundles show leakscope's cross-check against it.
	os.Setenv("GOEXPERIMENT", "goroutineleakprofile")
	only := map[string]bool{}
	for _, a := range os.Args[1:] {
		only[a] = true
	}
	for _, r := range recordings {
		if len(only) > 0 && !only[r.sample] {
			continue
		}
		out := r.sample + ".lsb"
		if err := os.RemoveAll(out); err != nil {
			return err
		}
		p, err := samples.Start(ctx, filepath.Join(root, r.sample), r.args...)
		if err != nil {
			return fmt.Errorf("start %s: %w", r.sample, err)
		}
		fmt.Printf("recording %s (pid %d) for %s\n", r.sample, p.PID, duration)
		capture := exec.Command(bin, "capture", "--pid", fmt.Sprint(p.PID), "--url", p.URL,
			"--duration", duration, "--interval", interval, "--trace-window", window, "--cpu-window", window, "-o", out)
		capture.Stdout, capture.Stderr = os.Stdout, os.Stderr
		err = capture.Run()
		p.Stop()
		if err != nil {
			return fmt.Errorf("capture %s: %w", r.sample, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}
