package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/leakscope/leakscope/agent"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/capture"
)

// runAgent implements `leakscope agent`.
func runAgent(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("agent", "agent (--pid PID | --exe NAME | --all)... [--to URL] [--listen ADDR] [--spool DIR]",
		`Runs on a node and watches Go processes: by pid, by executable name, or
every Go process whose net/http/pprof endpoint it can find (--all). Every
--watch-every it reads each one's goroutine count and heap in use from its
goroutine and heap profiles, and exports them on /metrics
(leakscope_agent_process_goroutines, leakscope_agent_process_heap_inuse_bytes).

A capture starts when the growth rule fires (the least-squares slope over
--window above --goroutine-growth per minute, or --heap-growth bytes per
minute, for --for), or when Alertmanager posts an alert to
http://LISTEN/alerts whose labels name a watched process: pid, pod (the
container's host name), instance (HOST:PORT the process listens on) or exe,
and node if present. The capture (pprof, trace windows, eBPF when
privileged) goes to the spool directory with its report.md and
postmortem.md, and is uploaded to the workbench given by --to, with retries
and backoff. The spool survives restarts and keeps at most --spool-max
bytes, dropping the oldest entries (uploaded ones first) with a log line.
The spool also keeps the last --history of every watched process's watch
profiles (bounded by --history-max); each capture starts with them as
earlier snapshots, so its report reaches back before the trigger.
GET /status shows the watched processes and the spool.`, stderr)
	var (
		pids, exes       listFlag
		cfg              agent.Config
		maxSpool         = byteSize(agent.DefaultSpoolMax)
		rules            string
		goroutineGrowth  = agent.DefaultRule.GoroutinesPerMin
		heapGrowth       float64
		minScore         float64
		captureDuration  = 2 * capture.DefaultDuration
		captureInterval  = capture.DefaultInterval
		traceWin, cpuWin = capture.DefaultTraceWindow, capture.DefaultCPUWindow
	)
	cfg.Rule = agent.DefaultRule
	fs.Var(&pids, "pid", "watch this process `PID` (repeatable)")
	fs.Var(&exes, "exe", "watch processes whose executable is `NAME` (repeatable)")
	fs.BoolVar(&cfg.Select.All, "all", false, "watch every Go process whose pprof endpoint can be found")
	fs.StringVar(&cfg.Listen, "listen", agent.DefaultListen, "`address` of the webhook (/alerts), /metrics and /status")
	fs.StringVar(&cfg.WebhookToken, "webhook-token", os.Getenv("LEAKSCOPE_WEBHOOK_TOKEN"), "bearer `token` the webhook requires (default $LEAKSCOPE_WEBHOOK_TOKEN)")
	fs.StringVar(&cfg.Node, "node", "", "node `name` in metrics, alerts and bundles (default: $NODE_NAME, else the host name)")
	fs.DurationVar(&cfg.WatchEvery, "watch-every", agent.DefaultWatchEvery, "period of the rolling watch")
	fs.DurationVar(&cfg.Rule.Window, "window", cfg.Rule.Window, "growth rule: fit window")
	fs.Float64Var(&goroutineGrowth, "goroutine-growth", goroutineGrowth, "growth rule: goroutines per minute that trigger a capture (0 = off)")
	fs.Float64Var(&heapGrowth, "heap-growth", 0, "growth rule: heap bytes per minute that trigger a capture (0 = off)")
	fs.DurationVar(&cfg.Rule.For, "for", cfg.Rule.For, "growth rule: how long the growth must last")
	fs.DurationVar(&cfg.Cooldown, "cooldown", agent.DefaultCooldown, "least time between two captures of one process")
	fs.DurationVar(&captureDuration, "capture-duration", captureDuration, "length of each capture")
	fs.DurationVar(&captureInterval, "capture-interval", captureInterval, "snapshot interval of each capture")
	fs.DurationVar(&traceWin, "trace-window", traceWin, "trace window per capture interval, whole seconds (0 = no trace)")
	fs.DurationVar(&cpuWin, "cpu-window", cpuWin, "CPU profile window per capture interval, whole seconds (0 = none)")
	fs.BoolVar(&cfg.Capture.NoEBPF, "no-ebpf", false, "do not attach eBPF probes")
	budget := ebpfBudgetFlag(fs)
	fs.StringVar(&cfg.SpoolDir, "spool", "/var/lib/leakscope/spool", "spool `directory` for captures waiting for upload")
	fs.Var(&maxSpool, "spool-max", "largest spool size in `bytes` (suffixes K, M, G)")
	fs.StringVar(&cfg.UploadTo, "to", "", "workbench base `URL` to upload captures to (empty: keep them in the spool)")
	fs.StringVar(&cfg.UploadToken, "token", os.Getenv("LEAKSCOPE_TOKEN"), "workbench write `token` (default $LEAKSCOPE_TOKEN)")
	fs.StringVar(&rules, "rules", "", "extra leak rules `FILE` for the reports; default $"+analysis.RulesEnv)
	fs.Float64Var(&minScore, "min-score", 0, "drop suspects scoring below this in the reports (0: default)")
	history := historyFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("agent: unexpected argument %q", pos[0])
	}
	for _, p := range pids {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 {
			return usagef("agent: --pid wants a process id, not %q", p)
		}
		cfg.Select.PIDs = append(cfg.Select.PIDs, n)
	}
	cfg.Select.Exes = exes
	if cfg.Select.Empty() {
		return usagef("agent: choose processes with --pid, --exe or --all")
	}
	if cfg.Node == "" {
		cfg.Node = capture.DefaultNode()
	}
	cfg.Rule.GoroutinesPerMin, cfg.Rule.HeapBytesPerMin = goroutineGrowth, heapGrowth
	cfg.SpoolMax = int64(maxSpool)
	cfg.History = history()
	cfg.Capture.Duration, cfg.Capture.Interval = captureDuration, captureInterval
	fit := max(1e9, (captureInterval / 3).Truncate(1e9))
	cfg.Capture.TraceWindow, cfg.Capture.CPUWindow = min(traceWin, fit), min(cpuWin, fit)
	cfg.Capture.Nice = capture.DefaultNice
	if cfg.Capture.EBPFBudget, err = budget(); err != nil {
		return usagef("agent: %v", err)
	}
	cfg.Capture.Out, cfg.Capture.URL = "placeholder", "placeholder"
	if err := cfg.Capture.Validate(); err != nil || captureDuration <= 0 {
		return usagef("agent: capture settings: %v", orDuration(err))
	}
	cfg.Capture.Out, cfg.Capture.URL = "", ""
	if cfg.Analysis.Rules, err = analysis.LoadRules(rules); err != nil {
		return err
	}
	cfg.Analysis.MinScore = minScore
	cfg.Version = version()
	cfg.Log = stderr
	a, err := agent.New(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "leakscope agent listening on http://%s/\n", a.Addr())
	return a.Run(ctx)
}

func orDuration(err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("--capture-duration must be positive")
}

// listFlag is a repeatable string flag; commas also separate values.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// byteSize is a flag of bytes with an optional K, M or G suffix (powers of 1024).
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *byteSize) Set(v string) error {
	mult := int64(1)
	s := strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(v)), "B")
	if s == "" {
		return fmt.Errorf("empty size")
	}
	switch s[len(s)-1] {
	case 'K':
		mult = 1 << 10
	case 'M':
		mult = 1 << 20
	case 'G':
		mult = 1 << 30
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("size %q: want bytes, e.g. 2G or 500M", v)
	}
	*b = byteSize(n * mult)
	return nil
}
