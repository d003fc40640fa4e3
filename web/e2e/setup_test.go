package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
