// Package globalmutex: a package-level metrics struct embeds a mutex. One
// recorder returns on an invalid sample without unlocking; every later
// recorder blocks. The mutex is reachable from a global, so the runtime's
// goroutineleak detector cannot prove the waiters leaked.
package globalmutex

import (
	"sync"
	"testing"
	"time"
)

var metrics struct {
	sync.Mutex
	samples map[string][]float64
}

func recordMetric(name string, v float64) {
	metrics.Lock()
	if v < 0 {
		return // bug: still locked
	}
	metrics.samples[name] = append(metrics.samples[name], v)
	metrics.Unlock()
}

func TestRecord(t *testing.T) {
	metrics.samples = map[string][]float64{}
	recordMetric("latency", -1)
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			recordMetric("latency", float64(i)*time.Millisecond.Seconds())
		}()
	}
	wg.Wait()
}
