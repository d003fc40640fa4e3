package capture

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/samples"
)

// TestScrapeInOtherNetns runs a leaky sample in a network namespace of its
// own (as a process in a pod is) listening on its loopback, and checks
// that a client for its pid reaches it from inside that namespace while a
// plain client cannot.
func TestScrapeInOtherNetns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("entering a network namespace needs root (CAP_SYS_ADMIN)")
	}
	for _, tool := range []string{"unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not installed", tool)
			}
			t.Skipf("%s not installed", tool)
		}
	}
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin, err := samples.Build(ctx, filepath.Join(root, "timeout-send"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "unshare", "--net", "sh", "-c", `ip link set lo up && exec "$0" -rate 20`, bin)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("sample in its own namespace: %v", err)
	}
	url := strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	pid := cmd.Process.Pid // sh exec'd the sample: same pid

	if _, err := ReadTotals(ctx, NewScrapeClient(0), url); err == nil {
		t.Fatalf("%s answered from the test's own namespace; the sample is not isolated", url)
	}
	found, err := DiscoverURL(ctx, NewScrapeClient(pid), pid)
	if err != nil {
		t.Fatalf("discover in the target's namespace: %v", err)
	}
	if found != url {
		t.Errorf("discovered %s, the sample listens on %s", found, url)
	}
	tot, err := ReadTotals(ctx, NewScrapeClient(pid), found)
	if err != nil {
		t.Fatalf("scrape in the target's namespace: %v", err)
	}
	if tot.Goroutines < 2 || tot.HeapInuse <= 0 {
		t.Errorf("totals %+v: want goroutines and heap", tot)
	}
}
