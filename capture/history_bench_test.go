package capture

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// BenchmarkIngestHistory ingests an hour of history at the default 15 s
// (240 goroutine and 240 heap profiles of the leaky sample) into a new
// bundle, as an agent-triggered capture does before its first round: the
// time it adds before the first dump, and so before the first answer.
func BenchmarkIngestHistory(b *testing.B) {
	p := startSample(b, "timeout-send")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := ReadSnapshot(ctx, NewScrapeClient(0), p.URL)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	var hist []HistoryFile
	t0 := time.Now().Add(-time.Hour)
	for i := range 240 {
		for prof, data := range map[string][]byte{"goroutine": s.Goroutine, "heap": s.Heap} {
			path := filepath.Join(dir, fmt.Sprintf("%d-%s", i, prof))
			if err := os.WriteFile(path, data, 0o644); err != nil {
				b.Fatal(err)
			}
			hist = append(hist, HistoryFile{Path: path, Profile: prof, Time: t0.Add(time.Duration(i) * 15 * time.Second)})
		}
	}
	b.Logf("one sample: goroutine profile %d bytes, heap profile %d bytes", len(s.Goroutine), len(s.Heap))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, err := bundle.Create(filepath.Join(b.TempDir(), "h.lsb"), bundle.NewManifest("bench", "bench"), memory.DefaultAllocator)
		if err != nil {
			b.Fatal(err)
		}
		c := &capturer{opts: Options{History: hist}, w: w, log: newProgress(io.Discard), start: time.Now()}
		c.ingestHistory()
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
