package capture

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"testing"

	"github.com/leakscope/leakscope/dev/benchstat"
)

// BenchmarkFlightOverhead measures what the flight recorder (package
// flight, imported by testdata/flightsvc) costs a busy service: two copies
// of it, one with the recorder and one with LEAKSCOPE_FLIGHT=off, have
// their /work (4 KiB digested through a pool of 500 workers, as the
// stable-pool sample's) driven in turn for -overhead.phase over
// -overhead.conns connections. Each phase with the recorder is compared
// with the mean of the phases without it just before and after; the
// metrics are medians over the iterations (-benchtime Nx).
func BenchmarkFlightOverhead(b *testing.B) {
	off := startFlightSvc(b, "0", "LEAKSCOPE_FLIGHT=off")
	on := startFlightSvc(b, "0")
	phase := *benchPhase
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *benchConns, DisableCompression: true}}
	defer client.CloseIdleConnections()
	drive(b, client, off, phase/5)
	drive(b, client, on, phase/5)
	ratios := map[string][]float64{}
	for b.Loop() {
		prev := drive(b, client, off, phase)
		got := drive(b, client, on, phase)
		next := drive(b, client, off, phase)
		ref, refCPU := (prev.reqPerSec+next.reqPerSec)/2, (prev.cpuPerReq+next.cpuPerReq)/2
		ratios["ratio_flight"] = append(ratios["ratio_flight"], got.reqPerSec/ref)
		ratios["cpu_per_req_ratio_flight"] = append(ratios["cpu_per_req_ratio_flight"], got.cpuPerReq/refCPU)
		ratios["cpu_µs_per_req_flight"] = append(ratios["cpu_µs_per_req_flight"], got.cpuPerReq*1e6)
		ratios["cpu_µs_per_req_off"] = append(ratios["cpu_µs_per_req_off"], refCPU*1e6)
		b.Logf("flight %6.0f req/s (off %6.0f), target CPU %5.1f µs/req (off %5.1f)", got.reqPerSec, ref, got.cpuPerReq*1e6, refCPU*1e6)
	}
	for _, name := range slices.Sorted(maps.Keys(ratios)) {
		v := ratios[name]
		b.ReportMetric(benchstat.Median(v), name)
		slices.Sort(v)
		fmt.Printf("flight overhead %-26s median %.4f over %d rounds: %.4f\n", name, benchstat.Median(v), len(v), v)
	}
}
