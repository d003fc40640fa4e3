package capture

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leakscope/leakscope/dev/benchstat"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/samples"
)

var (
	benchPhase = flag.Duration("overhead.phase", DefaultInterval, "length of each overhead benchmark phase; the capture interval")
	benchConns = flag.Int("overhead.conns", 8, "concurrent keep-alive connections driving /work")
	benchModes = flag.String("overhead.modes", "", "comma-separated modes to run (snapshots,cpu,trace,ebpf,all); empty runs every mode")
)

// BenchmarkOverhead drives the stable-pool sample's /work endpoint over
// loopback with a fixed number of keep-alive connections, once with no
// capture and once with each source alone and all together, and reports
// throughput under capture divided by the baseline (1.0 = no cost).
//
// Each phase lasts -overhead.phase (default: the default interval, 15 s),
// which is also the capture interval; the trace and CPU windows keep the
// defaults' duty cycle (2 s of 15 s), in whole seconds. Run with
// -benchtime Nx: each iteration runs every phase, and the metrics are the
// medians over the N iterations.
//
// The capture runs as a separate process (the re-executed test binary) at
// the CLI's default nice value, as `leakscope capture` does on a node; the
// load generator shares the machine with both, as a co-located client
// would.
func BenchmarkOverhead(b *testing.B) {
	p := startSample(b, "stable-pool")
	phase := *benchPhase
	window := max(time.Second, (phase * DefaultTraceWindow / DefaultInterval).Round(time.Second))
	base := Options{PID: p.PID, URL: p.URL, Duration: phase, Interval: phase, NoSnapshots: true, NoEBPF: true, Nice: DefaultNice}
	type mode struct {
		name string
		opts Options
	}
	with := func(f func(*Options)) Options { o := base; f(&o); return o }
	modes := []mode{
		{"snapshots", with(func(o *Options) { o.NoSnapshots = false })},
		{"cpu", with(func(o *Options) { o.CPUWindow = window })},
		{"trace", with(func(o *Options) { o.TraceWindow = window })},
		{"ebpf", with(func(o *Options) { o.NoEBPF = false })},
		{"all", with(func(o *Options) {
			o.NoSnapshots, o.NoEBPF, o.CPUWindow, o.TraceWindow = false, false, window, window
		})},
	}
	if *benchModes != "" {
		modes = slices.DeleteFunc(modes, func(m mode) bool { return !slices.Contains(strings.Split(*benchModes, ","), m.name) })
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *benchConns, DisableCompression: true}}
	defer client.CloseIdleConnections()
	drive(b, client, p, time.Second) // warm up connections and the target

	// Each iteration measures every mode once; the metrics are medians
	// over iterations (-benchtime Nx), which a single slow phase on a
	// shared machine does not move.
	ratios := map[string][]float64{}
	for b.Loop() {
		// Baselines interleave the modes, so each mode is compared with
		// the mean of the baselines just before and after it: other load
		// on the machine drifts slowly, and this cancels most of it.
		prev := drive(b, client, p, phase)
		first := prev
		for _, m := range modes {
			o := m.opts
			o.Out = filepath.Join(b.TempDir(), m.name+".lsb")
			cmd := childCommand(b, os.Args[0], o)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			got := drive(b, client, p, phase)
			if err := cmd.Wait(); err != nil {
				b.Fatalf("%s capture: %v\n%s", m.name, err, out.String())
			}
			capCPU := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			next := drive(b, client, p, phase)
			ref := (prev.reqPerSec + next.reqPerSec) / 2
			refCPU := (prev.cpuPerReq + next.cpuPerReq) / 2
			ratios["ratio_"+m.name] = append(ratios["ratio_"+m.name], got.reqPerSec/ref)
			ratios["cpu_per_req_ratio_"+m.name] = append(ratios["cpu_per_req_ratio_"+m.name], got.cpuPerReq/refCPU)
			b.Logf("%-9s %6.0f req/s (baseline %6.0f), target CPU %5.1f µs/req (baseline %5.1f), capture process CPU %v",
				m.name, got.reqPerSec, ref, got.cpuPerReq*1e6, refCPU*1e6, capCPU.Round(time.Millisecond))
			reportBundle(b, m.name, o.Out)
			prev = next
		}
		ratios["req/s_baseline"] = append(ratios["req/s_baseline"], first.reqPerSec)
		ratios["ratio_baseline_drift"] = append(ratios["ratio_baseline_drift"], prev.reqPerSec/first.reqPerSec)
	}
	for _, name := range slices.Sorted(maps.Keys(ratios)) {
		v := ratios[name]
		b.ReportMetric(benchstat.Median(v), name)
		slices.Sort(v)
		// Printed, not logged: a benchmark's log keeps its first ten lines.
		fmt.Printf("overhead %-28s median %.4f over %d rounds: %.4f\n", name, benchstat.Median(v), len(v), v)
	}
}

// load is what one phase of load measured.
type load struct {
	reqPerSec float64
	cpuPerReq float64 // target CPU seconds (user+system) per request
}

// reportBundle logs what a benchmark capture recorded and whether eBPF ran.
func reportBundle(b *testing.B, name, dir string) {
	m, err := bundle.ReadManifest(dir)
	if err != nil {
		b.Fatal(err)
	}
	var parts []string
	for _, s := range m.Sources {
		if s.Status == bundle.StatusUnavailable {
			parts = append(parts, s.Kind+" unavailable: "+s.Detail)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s %v", s.Kind, s.Status, s.Counters))
	}
	b.Logf("%s: %d artifacts; %s", name, len(m.Artifacts), strings.Join(parts, "; "))
}

// drive sends GET /work over -overhead.conns connections for d and returns
// the throughput and the target's CPU time per request.
func drive(b *testing.B, c *http.Client, p *samples.Process, d time.Duration) load {
	var n atomic.Int64
	var failed atomic.Value
	cpu0 := procCPU(b, p.PID)
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for range *benchConns {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				resp, err := c.Get(p.URL + "/work")
				if err != nil {
					failed.Store(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Store(fmt.Errorf("/work: %s", resp.Status))
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	cpu := procCPU(b, p.PID) - cpu0
	reqs := float64(max(n.Load(), 1))
	return load{reqPerSec: reqs / time.Since(start).Seconds(), cpuPerReq: cpu.Seconds() / reqs}
}

// procCPU is processCPU, failing b on error.
func procCPU(b *testing.B, pid int) time.Duration {
	d, err := processCPU(pid)
	if err != nil {
		b.Fatal(err)
	}
	return d
}
