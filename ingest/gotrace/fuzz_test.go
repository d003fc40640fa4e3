package gotrace

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// FuzzIngest checks that Ingest never panics and that it either fails with
// an error or succeeds with a status, never both or neither. The seed
// corpus in testdata/fuzz/FuzzIngest holds a tiny real trace and truncated
// copies of it (refresh with go test -run TestFuzzCorpus -update).
func FuzzIngest(f *testing.F) {
	f.Add([]byte("go 1.26 trace\x00\x00\x00"))
	f.Add([]byte("go 1.23 trace\x00\x00\x00\x01\x01\x00\x00\x00"))
	f.Add([]byte("not a trace"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		defer mem.AssertSize(t, 0)
		dir, a, err := ingestBytes(t, mem, data)
		if (err == nil) == (a.Status == "") {
			t.Fatalf("err %v with status %q", err, a.Status)
		}
		if err == nil && a.Status != bundle.StatusComplete && a.Status != bundle.StatusTruncated {
			t.Fatalf("status %q", a.Status)
		}
		if err == nil {
			if _, err := bundle.Open(dir); err != nil {
				t.Fatalf("bundle unreadable after ingest: %v", err)
			}
		}
	})
}

// TestFuzzCorpus rewrites the committed seed corpus from a fresh small
// trace when run with -update, and otherwise checks it is there.
func TestFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzIngest")
	if !*update {
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) < 3 {
			t.Fatalf("seed corpus %s missing (%v); run go test -run TestFuzzCorpus -update", dir, err)
		}
		return
	}
	rec := record(t)
	data, err := os.ReadFile(rec.small)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	seeds := map[string][]byte{
		"small-trace":     data,
		"small-cut-half":  data[:len(data)/2],
		"small-cut-tail":  data[:len(data)-7],
		"small-cut-batch": data[:headerLen+40],
	}
	for name, d := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", d)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
