package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// browserSetup finds node and Chromium (under CI a missing one fails the
// test rather than skipping it), installs the npm packages when needed and
// builds leakscope into a temporary directory. The context ends with the
// test.
func browserSetup(t *testing.T) (ctx context.Context, node, chromium, tmp, bin string) {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("CI") != "" {
		skip = t.Fatalf
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skip("node not installed")
	}
	chromium = os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		skip("no Chromium at %s (apt-get install -y chromium)", chromium)
	}
	tmp = t.TempDir() // made first: its removal runs after cancel
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	if _, err := os.Stat("node_modules/playwright-core"); err != nil {
		run(t, ctx, ".", "npm", "ci", "--no-audit", "--no-fund")
	}
	bin = filepath.Join(tmp, "leakscope")
	run(t, ctx, "../..", "go", "build", "-o", bin, "./cmd/leakscope")
	return ctx, node, chromium, tmp, bin
}

// startServe starts `leakscope serve` on a free loopback port with an
// empty data directory under tmp, stops it when the test ends, and
// returns its URL (no trailing slash), read from its banner.
func startServe(t *testing.T, ctx context.Context, bin, tmp string) string {
	t.Helper()
	srv := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(tmp, "data"), "--no-samples")
	out, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Signal(os.Interrupt); srv.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("read serve banner: %v", err)
	}
	_, rest, ok := strings.Cut(line, "http://")
	if !ok || len(strings.Fields(rest)) == 0 {
		t.Fatalf("serve banner %q has no URL", line)
	}
	return "http://" + strings.TrimSuffix(strings.Fields(rest)[0], "/")
}

// upload posts a bundle archive to the workbench at url and returns the
// capture's id.
func upload(t *testing.T, url, archive string) string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	resp, err := http.Post(url+"/api/captures", "application/zstd", f)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ans struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("upload %s: %s (%v)", archive, resp.Status, err)
	}
	return ans.ID
}
