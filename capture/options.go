package capture

import (
	"errors"
	"fmt"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// Default capture settings.
const (
	DefaultDuration = 60 * time.Second
	DefaultInterval = 15 * time.Second
	// The trace and CPU windows run 2 s of every 15 s interval, a duty
	// cycle of 13 %: at 5 s of 15 s each cost a busy service about 4 % of
	// its CPU (BenchmarkOverhead; see docs/PERF.md).
	DefaultTraceWindow = 2 * time.Second
	DefaultCPUWindow   = 2 * time.Second
	// DefaultClockSyncEvery is how often a (monotonic, wall) pair is taken.
	DefaultClockSyncEvery = 5 * time.Second
	// DefaultNice is the nice value the capture CLI runs at.
	DefaultNice = 10
)

// Options configures [Run].
type Options struct {
	// PID of the target process. With no URL the pprof endpoint is found
	// from the process's listening sockets. Needed for eBPF.
	PID int
	// URL is the target's base URL (http://host:port); /debug/pprof/... is
	// appended. A URL that already ends in /debug/pprof is accepted.
	URL string
	// Out is the bundle directory to create; it must not exist or be empty.
	Out string
	// Node names the node in the manifest (empty: [DefaultNode]).
	Node string

	// Duration ends the capture; 0 runs until ctx is cancelled.
	Duration time.Duration
	// Interval between snapshots (dump and profiles) and window starts.
	Interval time.Duration
	// TraceWindow is the length of the runtime/trace window recorded at the
	// start of every interval, in whole seconds; 0 disables tracing.
	TraceWindow time.Duration
	// CPUWindow is the length of the CPU profile recorded at the start of
	// every interval, in whole seconds; 0 disables CPU profiling.
	CPUWindow time.Duration
	// NoSnapshots disables the goroutine dump and the goroutine, heap,
	// allocs and goroutineleak profiles.
	NoSnapshots bool
	// NoEBPF disables the eBPF tracer.
	NoEBPF bool
	// EBPFBudget is the share of the target's CPU the eBPF goroutine
	// probes may cost it (0: [DefaultEBPFBudget]; 1 or more: no limit).
	// Above it they are attached for the first part of each interval
	// only, and the bundle's probe_windows table says when.
	EBPFBudget float64
	// ClockSyncEvery is the period of clock_sync pairs (default 5 s).
	ClockSyncEvery time.Duration

	// Nice, when positive, is the nice value the whole capturing process
	// takes at the start of Run, so that on a busy node the target wins
	// CPU contention (the CLI uses [DefaultNice]). It is not undone.
	Nice int

	// Tool is the tool version string written to the manifest.
	Tool string
	// CaptureID is the bundle's capture id; empty: one made from the
	// start time ([NewCaptureID]). The node agent picks it when the
	// capture is triggered, so its answer can link the capture before
	// the bundle exists.
	CaptureID string

	// Trigger is what started the capture (the node agent's alert or
	// rule), written to the manifest; nil for a capture started by hand.
	Trigger *bundle.Trigger

	// History are earlier goroutine and heap profiles of the target (the
	// node agent's rolling watch), ingested first as snapshots marked
	// history (bundle.RoleHistory).
	History []HistoryFile
	// FirstDump, when set, is called with the bundle directory once the
	// first complete dump (and the history before it) is in the bundle,
	// for a preliminary answer; the capture goes on meanwhile and waits
	// for it to return before closing the bundle.
	FirstDump func(bundleDir string) `json:"-"`
}

// withDefaults fills zero intervals with their defaults.
func (o Options) withDefaults() Options {
	if o.Interval == 0 {
		o.Interval = DefaultInterval
	}
	if o.EBPFBudget == 0 {
		o.EBPFBudget = DefaultEBPFBudget
	}
	if o.ClockSyncEvery == 0 {
		o.ClockSyncEvery = DefaultClockSyncEvery
	}
	if o.Tool == "" {
		o.Tool = "leakscope"
	}
	return o
}

// Validate reports options that cannot work together.
func (o Options) Validate() error {
	switch {
	case o.PID == 0 && o.URL == "":
		return errors.New("need --pid or --url")
	case o.PID < 0:
		return fmt.Errorf("bad pid %d", o.PID)
	case o.Out == "":
		return errors.New("need an output bundle (-o)")
	case o.Duration < 0:
		return fmt.Errorf("bad duration %v", o.Duration)
	case o.Nice < 0 || o.Nice > 19:
		return fmt.Errorf("nice %d is outside 0..19", o.Nice)
	case o.EBPFBudget < 0:
		return fmt.Errorf("eBPF budget %g is negative", o.EBPFBudget)
	case o.Interval < time.Second:
		return fmt.Errorf("interval %v is shorter than 1s", o.Interval)
	}
	for _, w := range []struct {
		name string
		d    time.Duration
	}{{"trace window", o.TraceWindow}, {"CPU window", o.CPUWindow}} {
		if w.d < 0 || w.d%time.Second != 0 {
			return fmt.Errorf("%s %v must be a whole number of seconds", w.name, w.d)
		}
		if w.d > o.Interval {
			return fmt.Errorf("%s %v is longer than the interval %v", w.name, w.d, o.Interval)
		}
	}
	return nil
}
