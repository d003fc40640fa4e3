package profiles

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/google/pprof/profile"
	"github.com/leakscope/leakscope/dev/bigprof"
	"github.com/leakscope/leakscope/ingest/bundle"
)

var (
	bigOnce sync.Once
	bigData []byte
)

// bigProfile builds the benchmark profile once.
func bigProfile(b *testing.B) []byte {
	bigOnce.Do(func() {
		var err error
		if bigData, err = bigprof.Profile(); err != nil {
			panic(err)
		}
	})
	return bigData
}

// BenchmarkProfileIngest puts leakscope's pprof ingest beside
// profile.Parse alone on the same large profile, in the same run, and
// reports both rates and their ratio (ingest time / parse time).
func BenchmarkProfileIngest(b *testing.B) {
	data := bigProfile(b)
	dir := b.TempDir()
	var parseTime, ingestTime time.Duration
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := profile.Parse(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		w, err := bundle.Create(filepath.Join(dir, fmt.Sprint(i)), bundle.NewManifest("bench", "bench"), memory.DefaultAllocator)
		if err != nil {
			b.Fatal(err)
		}
		if err := Ingest(w, bytes.NewReader(data), &bundle.Artifact{Name: "heap", Time: time.Now()}); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		parseTime += t1.Sub(t0)
		ingestTime += t2.Sub(t1)
		os.RemoveAll(filepath.Join(dir, fmt.Sprint(i)))
	}
	mb := float64(len(data)) * float64(b.N) / 1e6
	b.ReportMetric(mb/parseTime.Seconds(), "parse-MB/s")
	b.ReportMetric(mb/ingestTime.Seconds(), "ingest-MB/s")
	b.ReportMetric(ingestTime.Seconds()/parseTime.Seconds(), "ingest/parse")
}
