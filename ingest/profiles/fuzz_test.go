package profiles

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// FuzzIngest feeds arbitrary bytes to Ingest: it must return an error or
// rows, never panic, and a failed ingest must leave no rows behind once
// the writer is aborted.
func FuzzIngest(f *testing.F) {
	for _, name := range []string{"threadcreate.pb.gz", "goroutine.pb.gz", "goroutineleak.pb.gz"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n1: 2 [3: 4] @ 0x1\n"))
	f.Add([]byte{})
	f.Add([]byte("--- mutex:\ncycles/second=1\nsampling period=1\n10 2 @ 0x2 0x3\n#\t0x1\tmain.f+0x1\t/x.go:3\n#\t0x2\tmain.g+0x1\t/x.go:9\n"))
	f.Add([]byte("goroutineleak profile: total 1\n1 @ 0x2 0x3\n#\t0x1\tmain.leak+0x1d\t/x.go:29\n"))
	f.Add([]byte("--- threadz 1 ---\n\n--- Thread 7f (name: main/1) stack: ---\n  PC: 0x1 0x2\n"))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0x27, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x10, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		w, err := bundle.Create(filepath.Join(t.TempDir(), "f.lsb"), bundle.NewManifest("fuzz", "fuzz"), mem)
		if err != nil {
			t.Fatal(err)
		}
		a := &bundle.Artifact{Name: "fuzz", Time: time.Unix(1, 0)}
		err = Ingest(w, bytes.NewReader(data), a)
		if err != nil {
			if a.Rows != 0 || a.Status != "" {
				t.Fatalf("failed ingest reported rows=%d status=%q", a.Rows, a.Status)
			}
			w.Abort()
		} else if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		mem.AssertSize(t, 0)
	})
}
