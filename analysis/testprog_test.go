package analysis_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
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
func (p *testProg) build(t *testing.T) string {
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
