package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// trimProg dumps its goroutines once one waits in a select nobody ends.
const trimProg = `package main

import (
	"bytes"
	"os"
	"runtime"
	"runtime/pprof"
)

func waitBoth(a, b chan int) {
	select {
	case <-a:
	case <-b:
	}
}

func main() {
	go waitBoth(make(chan int), make(chan int))
	for {
		var buf bytes.Buffer
		pprof.Lookup("goroutine").WriteTo(&buf, 2)
		if bytes.Contains(buf.Bytes(), []byte("[select]:\nmain.waitBoth(")) {
			os.Stdout.Write(buf.Bytes())
			return
		}
		runtime.Gosched()
	}
}
`

// TestIngestSourceRoot ingests the dump of a real -trimpath build, whose
// frames name example.com/tp/main.go: without --source-root ingest and
// the report say the source is missing and what it cost; with the
// checkout (moved away from where it was built) as --source-root every
// function is kept and the report has nothing missing.
func TestIngestSourceRoot(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go program")
	}
	checkout := filepath.Join(t.TempDir(), "tp")
	os.Mkdir(checkout, 0o755)
	os.WriteFile(filepath.Join(checkout, "go.mod"), []byte("module example.com/tp\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(checkout, "main.go"), []byte(trimProg), 0o644)
	bin := filepath.Join(t.TempDir(), "tp")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	cmd.Dir = checkout
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil || !bytes.Contains(out, []byte("\texample.com/tp/main.go:")) {
		t.Fatalf("dump of a -trimpath build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	dump := filepath.Join(dir, "dump.txt")
	os.WriteFile(dump, out, 0o644)

	var stdout, stderr bytes.Buffer
	bare := filepath.Join(dir, "bare.lsb")
	if err := run(context.Background(), []string{"ingest", dump, "-o", bare}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "source: 0 of 2 functions the frames name kept") ||
		!strings.Contains(stderr.String(), "warning: source missing: 2 functions not kept (main.main (example.com/tp/main.go): not found") {
		t.Errorf("without --source-root:\nstdout %s\nstderr %s", stdout.String(), stderr.String())
	}
	rep := reportJSON(t, bare)
	cov, _ := rep["source_coverage"].(map[string]any)
	if cov == nil || cov["missing_count"] != 2.0 || cov["undecided_groups"] != 1.0 || !anyWarning(rep, "source missing: 2 of 2 functions") {
		t.Errorf("report without source: coverage %v, warnings %v", cov, rep["warnings"])
	}

	stdout.Reset()
	stderr.Reset()
	kept := filepath.Join(dir, "kept.lsb")
	if err := run(context.Background(), []string{"ingest", dump, "--source-root", checkout, "-o", kept}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "source: 2 of 2 functions the frames name kept") || strings.Contains(stderr.String(), "warning: source") {
		t.Errorf("with --source-root:\nstdout %s\nstderr %s", stdout.String(), stderr.String())
	}
	rep = reportJSON(t, kept)
	if cov, _ := rep["source_coverage"].(map[string]any); cov == nil || cov["missing_count"] != 0.0 || cov["kept"] != 2.0 || anyWarning(rep, "source ") {
		t.Errorf("report with source: coverage %v, warnings %v", cov, rep["warnings"])
	}
	// report --source-root reads the source for this report only.
	var js bytes.Buffer
	if err := run(context.Background(), []string{"report", bare, "--source-root", checkout, "--format", "json"}, &js, &stderr); err != nil {
		t.Fatal(err)
	}
	var withRoot map[string]any
	if err := json.Unmarshal(js.Bytes(), &withRoot); err != nil {
		t.Fatal(err)
	}
	if cov, _ := withRoot["source_coverage"].(map[string]any); cov == nil || cov["missing_count"] != 0.0 || cov["undecided_groups"] != 0.0 {
		t.Errorf("report --source-root: coverage %v", cov)
	}
	if cov, _ := reportJSON(t, bare)["source_coverage"].(map[string]any); cov == nil || cov["missing_count"] != 2.0 {
		t.Errorf("report --source-root changed the bundle: %v", cov)
	}
	if err := run(context.Background(), []string{"ingest", dump, "--source-root", filepath.Join(dir, "nowhere"), "-o", kept}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("a --source-root that is no directory: %v", err)
	}
}

func anyWarning(rep map[string]any, prefix string) bool {
	ws, _ := rep["warnings"].([]any)
	for _, w := range ws {
		if s, _ := w.(string); strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
