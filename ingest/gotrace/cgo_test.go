package gotrace

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// TestCgoReusedGoid: goroutines of cgo callbacks from C threads are
// created and destroyed per callback, and the runtime hands the next
// callback the same goroutine id. The window still has one row per
// goroutine id, from the first creation to the last end, and the
// transitions show every callback.
func TestCgoReusedGoid(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Fatalf("gcc is needed to build a cgo program: %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "cgoprog")
	build := exec.Command("go", "build", "-o", bin, "./testdata/cgoprog")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/cgoprog: %v\n%s", err, out)
	}
	path := filepath.Join(dir, "cgo.trace")
	out, err := exec.Command(bin, "-out", path, "-threads", "12").Output()
	if err != nil {
		t.Fatalf("cgoprog: %v", err)
	}
	if n, _ := strconv.Atoi(strings.TrimSpace(string(out))); n != 12 {
		t.Fatalf("cgoprog made %q callbacks", out)
	}
	// The trace does reuse ids: some goroutine is created several times.
	ref := referenceChanges(t, path)
	var reused int64
	creations := 0
	for g, cs := range ref {
		n := 0
		for _, c := range cs {
			if c.from == "notexist" && c.to == "syscall" {
				n++
			}
		}
		if n > creations {
			reused, creations = g, n
		}
	}
	if creations < 2 {
		t.Fatalf("no goroutine id created twice in a syscall; the trace does not exercise reuse")
	}

	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	bdir, _ := ingestFiles(t, mem, Options{}, path)
	tb := readTables(t, bdir, mem)
	for goid, rows := range byGoid(tb.goroutines) {
		if len(rows) != 1 {
			t.Errorf("goroutine %d has %d rows in one window: %+v", goid, len(rows), rows)
		}
	}
	g := byGoid(tb.goroutines)[reused][0]
	b, err := bundle.Open(bdir)
	if err != nil {
		t.Fatal(err)
	}
	trs, err := TransitionsFrom(b, nil, []int64{reused}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var starts, ends int
	var first, last int64
	for _, tr := range trs {
		if tr.From == "notexist" {
			starts++
			if first == 0 {
				first = tr.TS
			}
		}
		if tr.To == "notexist" {
			ends++
			last = tr.TS
		}
	}
	if starts != creations || ends < creations-1 {
		t.Errorf("goroutine %d: %d creations and %d ends in its transitions, the trace has %d creations", reused, starts, ends, creations)
	}
	if g.CreatedTS != first || (g.EndedTS != 0 && g.EndedTS != last) || (g.EndedTS != 0 && g.LastState != "notexist") {
		t.Errorf("goroutine %d row %+v; first creation %d, last end %d", reused, g, first, last)
	}
}
