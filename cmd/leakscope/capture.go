package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/leakscope/leakscope/capture"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// captureUsage is the synopsis of `leakscope capture`, captureDoc its description.
const (
	captureUsage = "capture (--pid PID | --url URL) [--duration D] [--interval I] [--trace-window W] [--no-ebpf] [--first-answer FILE] -o BUNDLE"
	captureDoc   = `Record a live Go process into a bundle, running on the node next to it.

Every interval it takes a goroutine dump (debug=2), the goroutine, heap and
allocs profiles (and goroutineleak when the runtime serves it), and starts a
CPU profile window and a runtime/trace window at the start of the interval.
With --pid and enough privileges it also attaches eBPF probes (goroutine
creation and exit, sampled allocations, GC cycles). Without eBPF it says why
and carries on. --duration, Ctrl-C or SIGTERM end the capture cleanly and
print a summary; a target that exits ends it too. With -o NAME.tar.zst the
bundle is recorded into NAME.lsb beside it and packed at the end. With
--first-answer FILE a preliminary report is written to FILE right after the
first dump, while the capture goes on.`
)

// runCapture implements `leakscope capture`.
func runCapture(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, firstAnswer, err := parseCaptureArgs(args, stderr)
	if err != nil {
		return err
	}
	archive, err := recordBesideArchive(&o)
	if err != nil {
		return err
	}
	if firstAnswer != "" {
		o.FirstDump = firstAnswerHook(firstAnswer, stderr)
	}
	sum, err := capture.Run(ctx, o, cleanWriter{stderr})
	if err == nil && archive != "" {
		err = packCapture(&sum, archive)
	}
	if sum.Bundle != "" {
		sum.Write(stdout)
	}
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	return nil
}

// parseCaptureArgs defines the flags of `leakscope capture`, parses args
// and checks them, giving the capture's options and the --first-answer
// file; a wrong flag is a usage error.
func parseCaptureArgs(args []string, stderr io.Writer) (capture.Options, string, error) {
	fs := newFlagSet("capture", captureUsage, captureDoc, stderr)
	var o capture.Options
	fs.IntVar(&o.PID, "pid", 0, "target process id (finds the pprof endpoint from its listening sockets; needed for eBPF)")
	fs.StringVar(&o.URL, "url", "", "target base URL serving net/http/pprof, e.g. http://127.0.0.1:6060")
	fs.StringVar(&o.Node, "node", "", "node `name` recorded in the bundle (default: $NODE_NAME, else the host name)")
	fs.StringVar(&o.Out, "o", "", "output bundle: a directory NAME.lsb, or an archive NAME.tar.zst (or .tar.gz); must not exist")
	fs.DurationVar(&o.Duration, "duration", capture.DefaultDuration, "how long to capture (0 = until interrupted)")
	fs.DurationVar(&o.Interval, "interval", capture.DefaultInterval, "time between snapshots and window starts")
	fs.DurationVar(&o.TraceWindow, "trace-window", capture.DefaultTraceWindow, "runtime/trace window per interval, whole seconds (0 = no trace)")
	fs.DurationVar(&o.CPUWindow, "cpu-window", capture.DefaultCPUWindow, "CPU profile window per interval, whole seconds (0 = no CPU profile)")
	fs.BoolVar(&o.NoEBPF, "no-ebpf", false, "do not attach eBPF probes")
	budget := ebpfBudgetFlag(fs)
	fs.IntVar(&o.Nice, "nice", capture.DefaultNice, "nice value to capture at, so the target wins CPU contention (0 = unchanged)")
	firstAnswer := fs.String("first-answer", "", "write a preliminary Markdown report to `FILE` right after the first dump, while the capture goes on")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return o, "", err
	}
	if len(pos) > 0 {
		return o, "", usagef("capture: unexpected argument %q", pos[0])
	}
	if o.PID == 0 && o.URL == "" {
		return o, "", usagef("capture: need --pid or --url")
	}
	if o.Out == "" {
		return o, "", usagef("capture: need -o BUNDLE")
	}
	fitDefaultWindows(fs, &o)
	if o.EBPFBudget, err = budget(); err != nil {
		return o, "", usagef("capture: %v", err)
	}
	o.Tool = "leakscope " + version()
	if err := o.Validate(); err != nil {
		return o, "", usagef("capture: %v", err)
	}
	return o, *firstAnswer, nil
}

// fitDefaultWindows shrinks the windows left at their default to a third
// of a short interval (the default duty cycle), so that one ends before
// the next starts.
func fitDefaultWindows(fs *flag.FlagSet, o *capture.Options) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	fit := max(time.Second, (o.Interval / 3).Truncate(time.Second))
	if !set["trace-window"] && o.TraceWindow > o.Interval-time.Second {
		o.TraceWindow = fit
	}
	if !set["cpu-window"] && o.CPUWindow > o.Interval-time.Second {
		o.CPUWindow = fit
	}
}

// recordBesideArchive refuses an output that exists. For an archive
// output it points o.Out at NAME.lsb beside it and returns the archive:
// the capture records there and is packed at the end, so a capture killed
// on the way still leaves a readable bundle.
func recordBesideArchive(o *capture.Options) (archive string, err error) {
	if exists(o.Out) {
		return "", fmt.Errorf("capture: %s already exists; capture writes a new bundle and leaves an existing one alone: remove it or choose another name with -o", o.Out)
	}
	if bundle.FormatFromName(o.Out) == "" {
		return "", nil
	}
	archive = o.Out
	o.Out = filepath.Join(filepath.Dir(archive), archiveStem(archive)+".lsb")
	if exists(o.Out) {
		return "", fmt.Errorf("capture: -o %s records into %s first, which exists; remove it or choose another name", archive, o.Out)
	}
	return archive, nil
}

// packCapture turns the recorded bundle into the archive and removes the
// directory; on failure the directory stays and the error says where.
func packCapture(sum *capture.Summary, archive string) error {
	if err := writeArchive(sum.Bundle, archive); err != nil {
		return fmt.Errorf("%w (the bundle directory %s is kept)", err, sum.Bundle)
	}
	if err := os.RemoveAll(sum.Bundle); err != nil {
		return err
	}
	sum.Bundle = archive
	if st, err := os.Stat(archive); err == nil {
		sum.BundleBytes = st.Size()
	}
	return nil
}

// ebpfBudgetFlag defines --ebpf-budget on fs; the function it returns
// gives the budget as a share of the target's CPU once fs is parsed.
func ebpfBudgetFlag(fs *flag.FlagSet) func() (float64, error) {
	pct := fs.Float64("ebpf-budget", 100*capture.DefaultEBPFBudget,
		"percent of the target's CPU the eBPF goroutine probes may cost; above it they are attached for the first part of each interval only (100 = always attached)")
	return func() (float64, error) {
		if *pct <= 0 {
			return 0, fmt.Errorf("--ebpf-budget %g must be above 0 (percent of the target's CPU)", *pct)
		}
		return *pct / 100, nil
	}
}
