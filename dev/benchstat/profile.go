package benchstat

import (
	"bytes"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

// ProfilePeak samples the heap every 50 ms and keeps the heap profile
// taken when the heap in use was largest; the returned stop writes it to
// path. It shows what holds memory at the peak, which an end-of-run
// profile does not.
func ProfilePeak(path string) (stop func()) {
	runtime.MemProfileRate = 64 << 10
	done := make(chan struct{})
	finished := make(chan struct{})
	var best bytes.Buffer
	go func() {
		defer close(finished)
		var peak uint64
		var ms runtime.MemStats
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak+peak/20 {
				peak = ms.HeapInuse
				best.Reset()
				pprof.Lookup("heap").WriteTo(&best, 0)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		os.WriteFile(path, best.Bytes(), 0o644)
	}
}

// ProfileCPU starts a CPU profile into path; stop ends it.
func ProfileCPU(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
