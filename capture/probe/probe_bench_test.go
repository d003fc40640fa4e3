//go:build linux

package probe

import (
	"context"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
)

// BenchmarkProbeOverhead measures the cost the probes add to the process
// they trace (here the benchmark itself). One op runs a batch of work
// without the tracer, attaches, runs the same batch traced, and detaches;
// it reports ns per unit of work without and with probes, their ratio, and
// the cost per probe hit. The ring buffer is large enough for the whole
// batch and is read only afterwards, so the figures are the traced
// process's cost (uprobe trap plus BPF program), not the reader's, which
// a capture pays in its own process. It is meaningful with -benchtime 1x.
func BenchmarkProbeOverhead(b *testing.B) {
	b.Run("spawn", func(b *testing.B) {
		// Each goroutine is one go_create and one go_exit hit.
		benchOverhead(b, Options{Goroutines: true}, spawnBatch, 2, "spawn")
	})
	b.Run("spawn+stacks", func(b *testing.B) {
		benchOverhead(b, Options{Goroutines: true, CreateStacks: true}, spawnBatch, 2, "spawn")
	})
	b.Run("alloc", func(b *testing.B) {
		// With MemProfileRate 1 every allocation calls profilealloc: one
		// alloc hit (with a stack) per allocation.
		old := runtime.MemProfileRate
		runtime.MemProfileRate = 1
		defer func() { runtime.MemProfileRate = old }()
		benchOverhead(b, Options{Alloc: true}, allocBatch, 1, "alloc")
	})
}

const batch = 20000

// spawnBatch starts batch goroutines that exit at once; ns per goroutine.
func spawnBatch() float64 {
	var wg sync.WaitGroup
	start := time.Now()
	for range batch {
		wg.Add(1)
		go wg.Done()
	}
	wg.Wait()
	return float64(time.Since(start).Nanoseconds()) / batch
}

var benchSink []byte

// allocBatch makes batch small heap allocations; ns per allocation.
func allocBatch() float64 {
	start := time.Now()
	for range batch {
		benchSink = make([]byte, 64)
	}
	return float64(time.Since(start).Nanoseconds()) / batch
}

// warmOnce attaches and detaches once per process before any measurement:
// the first attachment of a process is markedly slower (uprobe and ring
// buffer setup), which would bias whichever sub-benchmark runs first.
var warmOnce sync.Once

func benchOverhead(b *testing.B, opts Options, work func() float64, hitsPerUnit float64, unit string) {
	requirePrivileged(b)
	warmOnce.Do(func() {
		tr, err := Attach(os.Getpid(), Options{})
		if err == nil {
			spawnBatch()
			allocBatch()
			tr.Close()
		}
	})
	var off, on float64
	var events int64
	for i := 0; i < b.N; i++ {
		work() // warm up stacks and caches
		off += work()
		b.StopTimer()
		opts.RingBufferBytes = 64 << 20
		tr, err := Attach(os.Getpid(), opts)
		skipIfNotSupported(b, err)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		on += work()
		b.StopTimer()
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // deliver what is buffered, then return
		if err := tr.Run(ctx, func(Event) {}); err != nil {
			b.Fatal(err)
		}
		for _, n := range tr.Stats().Events {
			events += n
		}
		for kind, n := range tr.Stats().Drops {
			if n > 0 {
				b.Logf("%d %s records dropped", n, kind)
			}
		}
		tr.Close()
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(off/n, "ns/"+unit+"-off")
	b.ReportMetric(on/n, "ns/"+unit+"-on")
	b.ReportMetric(on/off, "ratio")
	b.ReportMetric((on-off)/n/hitsPerUnit, "ns/hit")
	b.ReportMetric(float64(events)/n, "events/op")
}
