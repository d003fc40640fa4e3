package capture

import (
	"context"
	"testing"
	"time"
)

// BenchmarkWatchSample reads the agent's watch sample (goroutine and heap
// profiles, kept for its history) from the stable-pool sample (500 parked
// workers) b.N times, and reports the target's CPU per sample beyond its
// CPU over an idle stretch as long, and that cost as a share of one CPU
// at the default 15 s watch.
func BenchmarkWatchSample(b *testing.B) {
	p := startSample(b, "stable-pool")
	ctx := context.Background()
	c := NewScrapeClient(0)
	if _, err := ReadSnapshot(ctx, c, p.URL); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0, start := procCPU(b, p.PID), time.Now()
	var bytes int
	for i := 0; i < b.N; i++ {
		s, err := ReadSnapshot(ctx, c, p.URL)
		if err != nil {
			b.Fatal(err)
		}
		bytes = len(s.Goroutine) + len(s.Heap)
	}
	busy, wall := procCPU(b, p.PID)-cpu0, time.Since(start)
	b.StopTimer()
	idle0 := procCPU(b, p.PID)
	time.Sleep(wall)
	idle := procCPU(b, p.PID) - idle0
	per := (busy - idle).Seconds() / float64(b.N)
	b.ReportMetric(per*1e6, "target_cpu_µs/sample")
	b.ReportMetric(100*per/DefaultInterval.Seconds(), "target_cpu_%_at_15s")
	b.ReportMetric(float64(bytes), "history_bytes/sample")
}
