package probe

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var buildDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "probe-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	buildMu    sync.Mutex
	buildCache = map[string]string{}
)

// buildSpawner builds testdata/spawner once per flavour ("", "stripped"
// for -s -w, or "pie" for a position-independent executable) and returns
// the executable's path.
func buildSpawner(tb testing.TB, flavour string) string {
	tb.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := buildCache[flavour]; ok {
		return p
	}
	out := filepath.Join(buildDir, "spawner"+flavour)
	args := []string{"build", "-o", out}
	switch flavour {
	case "stripped":
		args = append(args, "-ldflags=-s -w")
	case "pie":
		args = append(args, "-buildmode=pie")
	}
	cmd := exec.Command("go", append(args, "./testdata/spawner")...)
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("build spawner: %v\n%s", err, b)
	}
	buildCache[flavour] = out
	return out
}
