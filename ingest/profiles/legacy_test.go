package profiles

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/google/pprof/profile"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// ingestFile ingests one profile file into a new bundle and returns the
// artifact and the functions its samples name.
func ingestFile(t *testing.T, path string) (bundle.Artifact, map[string]bool, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w := newBundle(t, mem)
	a := bundle.Artifact{Name: filepath.Base(path)}
	if err := Ingest(w, bytes.NewReader(data), &a); err != nil {
		w.Abort()
		return a, nil, err
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fns := map[string]bool{}
	b, _ := bundle.Open(w.Dir())
	b.Frames(mem, func(f schema.Frame) { fns[f.Function] = true })
	return a, fns, nil
}

// TestLegacyText ingests the debug=1 text form of every profile a real Go
// program offers: each is stored under its own name (a "--- mutex:"
// profile as mutex, not block), with its stacks named from the comment
// lines Go prints, not as bare addresses.
func TestLegacyText(t *testing.T) {
	dir := realProfiles(t)
	for name, want := range map[string]struct {
		profile, fn string
	}{
		"goroutine.txt":     {schema.ProfileGoroutine, "main.parkOnChannel"},
		"goroutineleak.txt": {schema.ProfileGoroutineLeak, "main.leakSender.func1"},
		"threadcreate.txt":  {schema.ProfileThreadcreate, ""},
		"heap.txt":          {schema.ProfileHeap, "main.allocate"},
		"block.txt":         {schema.ProfileBlock, "main.contend.func1"},
		"mutex.txt":         {schema.ProfileMutex, "main.contend.func1"},
	} {
		a, fns, err := ingestFile(t, filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if a.Profile != want.profile || a.Rows == 0 {
			t.Errorf("%s: stored as %q with %d rows, want %q", name, a.Profile, a.Rows, want.profile)
		}
		if want.fn != "" && !fns[want.fn] {
			t.Errorf("%s: no frame names %s (frames %v)", name, want.fn, keys(fns, 8))
		}
	}
}

func keys(m map[string]bool, n int) []string {
	var out []string
	for k := range m {
		if len(out) == n {
			break
		}
		out = append(out, k)
	}
	return out
}

// pprofTestdata returns google/pprof's own test profiles (from the module
// cache): real profiles of Go, C++ and Java programs in the legacy forms.
func pprofTestdata(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/google/pprof").Output()
	if err != nil {
		t.Fatalf("locate github.com/google/pprof: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "profile", "testdata")
}

// TestLegacyForms ingests what profile.Parse reads: Go's old binary CPU
// profiles, legacy contention and threadz text (accepted, with the same
// samples as profile.Parse gives), and Java profiles (refused, named).
func TestLegacyForms(t *testing.T) {
	td := pprofTestdata(t)
	for name, want := range map[string]string{
		"go.crc32.cpu":        schema.ProfileCPU,
		"gobench.cpu":         schema.ProfileCPU,
		"cppbench.contention": schema.ProfileBlock,
		"cppbench.thread":     schema.ProfileThreads,
		"go.godoc.thread":     schema.ProfileThreadcreate,
		"gobench.heap":        schema.ProfileHeap,
	} {
		path := filepath.Join(td, name)
		a, _, err := ingestFile(t, path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		data, _ := os.ReadFile(path)
		p, err := profile.ParseData(data)
		if err != nil {
			t.Fatalf("%s: pprof itself: %v", name, err)
		}
		if a.Profile != want || a.Rows != int64(len(p.Sample)) {
			t.Errorf("%s: %q with %d rows, want %q with pprof's %d samples", name, a.Profile, a.Rows, want, len(p.Sample))
		}
	}
	for _, name := range []string{"java.heap", "java.cpu", "java.contention"} {
		if _, _, err := ingestFile(t, filepath.Join(td, name)); err == nil || !strings.Contains(err.Error(), "Java") {
			t.Errorf("%s: %v, want a refusal naming Java", name, err)
		}
	}
}
