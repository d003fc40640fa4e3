package analysis_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// perCallTest is a module whose test opens a *sql.DB per call and never
// closes it, then hangs until `go test -timeout` prints every goroutine.
var perCallTest = map[string]string{
	"go.mod": "module example.com/tbin\n\ngo 1.22\n",
	"store/store.go": `package store

import (
	"database/sql"
	"database/sql/driver"
	"errors"
)

type drv struct{}

func (drv) Open(string) (driver.Conn, error) { return nil, errors.New("no") }

func init() { sql.Register("fake", drv{}) }
`,
	"store/store_test.go": `package store

import (
	"database/sql"
	"testing"
	"time"
)

func report() {
	db, _ := sql.Open("fake", "x")
	_ = db
}

func TestLeak(t *testing.T) {
	for i := 0; i < 20; i++ {
		report()
	}
	time.Sleep(time.Hour)
}
`,
}

// TestTestBinaryOrigin ingests the `go test -timeout` output of a test
// that leaks a *sql.DB per call: no stack shows who called sql.Open, so
// the incident's origin comes from the call index of the test binary's
// own package, test files included, named as the binary names it.
func TestTestBinaryOrigin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a go test binary")
	}
	root := t.TempDir()
	for name, text := range perCallTest {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-count=1", "-timeout", "3s", "./store/")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	out, _ := cmd.CombinedOutput() // the timeout fails the test: expected
	log := filepath.Join(t.TempDir(), "test.log")
	if err := os.WriteFile(log, out, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "t.lsb")
	if _, err := ingest.File(dir, log, ingest.Options{}); err != nil {
		t.Fatalf("ingest: %v\n%s", err, out)
	}
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Analyze(b, memory.DefaultAllocator, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Incidents) == 0 {
		t.Fatalf("no incident from:\n%s", out)
	}
	inc := rep.Incidents[0]
	const want = "example.com/tbin/store.report"
	if o := inc.Origin; o == nil || o.Function != want || o.Basis != "source" || filepath.Base(o.File) != "store_test.go" || o.Line != 10 {
		t.Errorf("origin %+v, want %s at store_test.go:10 from the source (evidence %q)", inc.Origin, want, originDetail(inc))
	}
}
