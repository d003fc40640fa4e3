package analysis_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/capture"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/samples"
)

// testProg is a program under testdata/NAME that tests build once per
// test binary, under the temporary directory TestMain removes.
type testProg struct {
	name string
	once sync.Once
	path string
	err  error
}

// build builds testdata/NAME/main.go the first time it is asked for and
// returns the binary; it skips under -short.
func (p *testProg) build(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs a Go program")
	}
	p.once.Do(func() {
		tmpOnce.Do(func() { tmpRoot, tmpErr = os.MkdirTemp("", "leakscope-bench-") })
		if p.err = tmpErr; p.err != nil {
			return
		}
		p.path = filepath.Join(tmpRoot, p.name)
		src := filepath.Join("testdata", p.name, "main.go")
		if out, err := exec.Command("go", "build", "-o", p.path, src).CombinedOutput(); err != nil {
			p.err = fmt.Errorf("build %s: %v\n%s", p.name, err, out)
		}
	})
	if p.err != nil {
		t.Fatal(p.err)
	}
	return p.path
}

// captureReport captures sample process p for 7 s (one dump and heap
// profile a second, no eBPF) into a bundle called name and analyses it.
func captureReport(t *testing.T, ctx context.Context, p *samples.Process, name string) (*bundle.Bundle, *analysis.Report) {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	if _, err := capture.Run(ctx, capture.Options{PID: p.PID, URL: p.URL, Out: out, Duration: 7 * time.Second,
		Interval: time.Second, NoEBPF: true}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rep, err := analysis.Analyze(b, mem, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return b, rep
}
