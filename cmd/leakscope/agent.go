package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/leakscope/leakscope/agent"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/capture"
)

// agentUsage is the synopsis of `leakscope agent`, agentDoc its description.
const (
	agentUsage = "agent (--pid PID | --exe NAME | --all)... [--to URL] [--listen ADDR] [--spool DIR]"
	agentDoc   = `Runs on a node and watches Go processes: by pid, by executable name, or
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
GET /status shows the watched processes and the spool.`
)

// runAgent implements `leakscope agent`.
func runAgent(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("agent", agentUsage, agentDoc, stderr)
	f := defineAgentFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("agent: unexpected argument %q", pos[0])
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	cfg.Version = version()
	cfg.Log = stderr
	a, err := agent.New(cfg)
	if err != nil {
		return err
	}
	printf(stdout, "leakscope agent listening on http://%s/\n", a.Addr())
	return a.Run(ctx)
}

// agentFlags holds the flags of `leakscope agent`: those that map one to
// one onto agent.Config are set in cfg, the others are turned into it by
// [agentFlags.config].
type agentFlags struct {
	pids, exes       listFlag
	cfg              agent.Config
	maxSpool         byteSize
	rules            string
	goroutineGrowth  float64
	heapGrowth       float64
	minScore         float64
	captureDuration  time.Duration
	captureInterval  time.Duration
	traceWin, cpuWin time.Duration
	budget           func() (float64, error)
	history          func() agent.HistoryConfig
}

// defineAgentFlags defines the flags of `leakscope agent` on fs.
func defineAgentFlags(fs *flag.FlagSet) *agentFlags {
	f := &agentFlags{
		maxSpool:        byteSize(agent.DefaultSpoolMax),
		goroutineGrowth: agent.DefaultRule.GoroutinesPerMin,
		captureDuration: 2 * capture.DefaultDuration,
		captureInterval: capture.DefaultInterval,
		traceWin:        capture.DefaultTraceWindow,
		cpuWin:          capture.DefaultCPUWindow,
	}
	cfg := &f.cfg
	cfg.Rule = agent.DefaultRule
	fs.Var(&f.pids, "pid", "watch this process `PID` (repeatable)")
	fs.Var(&f.exes, "exe", "watch processes whose executable is `NAME` (repeatable)")
	fs.BoolVar(&cfg.Select.All, "all", false, "watch every Go process whose pprof endpoint can be found")
	fs.StringVar(&cfg.Listen, "listen", agent.DefaultListen, "`address` of the webhook (/alerts), /metrics and /status")
	fs.StringVar(&cfg.WebhookToken, "webhook-token", os.Getenv("LEAKSCOPE_WEBHOOK_TOKEN"), "bearer `token` the webhook requires (default $LEAKSCOPE_WEBHOOK_TOKEN)")
	fs.StringVar(&cfg.Node, "node", "", "node `name` in metrics, alerts and bundles (default: $NODE_NAME, else the host name)")
	fs.DurationVar(&cfg.WatchEvery, "watch-every", agent.DefaultWatchEvery, "period of the rolling watch")
	fs.DurationVar(&cfg.Rule.Window, "window", cfg.Rule.Window, "growth rule: fit window")
	fs.Float64Var(&f.goroutineGrowth, "goroutine-growth", f.goroutineGrowth, "growth rule: goroutines per minute that trigger a capture (0 = off)")
	fs.Float64Var(&f.heapGrowth, "heap-growth", 0, "growth rule: heap bytes per minute that trigger a capture (0 = off)")
	fs.DurationVar(&cfg.Rule.For, "for", cfg.Rule.For, "growth rule: how long the growth must last")
	fs.DurationVar(&cfg.Cooldown, "cooldown", agent.DefaultCooldown, "least time between two captures of one process")
	fs.DurationVar(&f.captureDuration, "capture-duration", f.captureDuration, "length of each capture")
	fs.DurationVar(&f.captureInterval, "capture-interval", f.captureInterval, "snapshot interval of each capture")
	fs.DurationVar(&f.traceWin, "trace-window", f.traceWin, "trace window per capture interval, whole seconds (0 = no trace)")
	fs.DurationVar(&f.cpuWin, "cpu-window", f.cpuWin, "CPU profile window per capture interval, whole seconds (0 = none)")
	fs.BoolVar(&cfg.Capture.NoEBPF, "no-ebpf", false, "do not attach eBPF probes")
	f.budget = ebpfBudgetFlag(fs)
	fs.StringVar(&cfg.SpoolDir, "spool", "/var/lib/leakscope/spool", "spool `directory` for captures waiting for upload")
	fs.Var(&f.maxSpool, "spool-max", "largest spool size in `bytes` (suffixes K, M, G, T)")
	fs.StringVar(&cfg.UploadTo, "to", "", "workbench base `URL` to upload captures to (empty: keep them in the spool)")
	fs.StringVar(&cfg.UploadToken, "token", os.Getenv("LEAKSCOPE_TOKEN"), "workbench write `token` (default $LEAKSCOPE_TOKEN)")
	fs.StringVar(&f.rules, "rules", "", "extra leak rules `FILE` for the reports; default $"+analysis.RulesEnv)
	fs.Float64Var(&f.minScore, "min-score", 0, "drop suspects scoring below this in the reports (0: default)")
	f.history = historyFlags(fs)
	return f
}

// config checks the parsed flags and turns them into the agent's
// configuration, with a usage error for any that is wrong.
func (f *agentFlags) config() (agent.Config, error) {
	cfg := f.cfg
	for _, p := range f.pids {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 {
			return cfg, usagef("agent: --pid wants a process id, not %q", p)
		}
		cfg.Select.PIDs = append(cfg.Select.PIDs, n)
	}
	cfg.Select.Exes = f.exes
	if cfg.Select.Empty() {
		return cfg, usagef("agent: choose processes with --pid, --exe or --all")
	}
	if cfg.Node == "" {
		cfg.Node = capture.DefaultNode()
	}
	cfg.Rule.GoroutinesPerMin, cfg.Rule.HeapBytesPerMin = f.goroutineGrowth, f.heapGrowth
	cfg.SpoolMax = int64(f.maxSpool)
	cfg.History = f.history()
	var err error
	if cfg.Capture, err = f.captureOptions(); err != nil {
		return cfg, err
	}
	if cfg.Analysis.Rules, err = analysis.LoadRules(f.rules); err != nil {
		return cfg, err
	}
	cfg.Analysis.MinScore = f.minScore
	return cfg, nil
}

// captureOptions gives the options of every capture the agent takes,
// checked as `leakscope capture` checks its own; the target and output
// are the agent's to fill in per capture.
func (f *agentFlags) captureOptions() (capture.Options, error) {
	o := f.cfg.Capture
	o.Duration, o.Interval = f.captureDuration, f.captureInterval
	fit := max(1e9, (f.captureInterval / 3).Truncate(1e9))
	o.TraceWindow, o.CPUWindow = min(f.traceWin, fit), min(f.cpuWin, fit)
	o.Nice = capture.DefaultNice
	var err error
	if o.EBPFBudget, err = f.budget(); err != nil {
		return o, usagef("agent: %v", err)
	}
	o.Out, o.URL = "placeholder", "placeholder"
	if err := o.Validate(); err != nil || f.captureDuration <= 0 {
		return o, usagef("agent: capture settings: %v", orDuration(err))
	}
	o.Out, o.URL = "", ""
	return o, nil
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
