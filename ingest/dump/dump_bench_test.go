package dump

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/dev/dumpgen"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// benchGoroutines is the size of the benchmark dump. The dump is made once
// and cached under os.TempDir()/leakscope-dump-bench (see dumpgen.Cached).
const benchGoroutines = 1_000_000

func benchDump(b *testing.B) (string, int64) {
	b.Helper()
	path, err := dumpgen.Cached(benchGoroutines, b.Logf)
	if err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, st.Size()
}

// BenchmarkReader parses the 1M-goroutine dump; it reports MB/s and
// goroutines/s.
func BenchmarkReader(b *testing.B) {
	path, size := benchDump(b)
	b.SetBytes(size)
	b.ResetTimer()
	var n int
	start := time.Now()
	for i := 0; i < b.N; i++ {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		rd := NewReader(f)
		n = 0
		for {
			_, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		f.Close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/time.Since(start).Seconds(), "goroutines/s")
	if n < benchGoroutines {
		b.Fatalf("parsed %d goroutines, want at least %d", n, benchGoroutines)
	}
}

// BenchmarkIngest ingests the 1M-goroutine dump into a fresh bundle.
func BenchmarkIngest(b *testing.B) {
	path, size := benchDump(b)
	b.SetBytes(size)
	b.ResetTimer()
	var rows int64
	start := time.Now()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "bench.lsb")
		w, err := bundle.Create(dir, bundle.NewManifest("bench", "bench"), memory.DefaultAllocator)
		if err != nil {
			b.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		a := &bundle.Artifact{Name: "raw/crash.txt", Time: time.Now()}
		if err := Ingest(w, bufio.NewReader(f), a); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		f.Close()
		rows = a.Rows
	}
	b.ReportMetric(float64(rows)*float64(b.N)/time.Since(start).Seconds(), "goroutines/s")
	if rows < benchGoroutines {
		b.Fatalf("ingested %d rows, want at least %d", rows, benchGoroutines)
	}
}
