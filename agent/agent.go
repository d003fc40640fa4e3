package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/capture"
	"github.com/leakscope/leakscope/internal/httpguard"
)

// Defaults of [Config].
const (
	DefaultListen     = "127.0.0.1:9464"
	DefaultWatchEvery = 15 * time.Second
	DefaultCooldown   = 30 * time.Minute
	DefaultSpoolMax   = 2 << 30
	// rediscoverEvery is how long a process without a pprof endpoint is
	// left alone before the agent looks again.
	rediscoverEvery = time.Minute
)

// Config configures an [Agent].
type Config struct {
	// Node names this node in metrics, alerts and bundles (default:
	// capture.DefaultNode, $NODE_NAME or the host name).
	Node   string
	Select Selection
	// Listen is the address of the webhook (POST /alerts), /metrics,
	// /status and /healthz. Empty: DefaultListen.
	Listen string
	// WebhookToken, when set, is required as "Authorization: Bearer
	// TOKEN" on the webhook (Alertmanager's http_config authorization).
	WebhookToken string
	// WatchEvery is the period of the rolling watch (default 15 s).
	WatchEvery time.Duration
	// Rule is the agent's own trigger; a rule with both limits 0 only
	// watches, and captures on alerts alone.
	Rule Rule
	// Cooldown is the least time between two captures of one process
	// (0: DefaultCooldown).
	Cooldown time.Duration
	// Capture is the template of every capture (duration, interval,
	// windows, eBPF); PID, URL and Out are filled in per capture.
	Capture capture.Options
	// SpoolDir holds the captures until they are uploaded; SpoolMax bounds
	// its size in bytes.
	SpoolDir string
	SpoolMax int64
	// History is the rolling window of watch profiles kept in the spool
	// (zero Keep: none).
	History HistoryConfig
	// UploadTo is the workbench base URL (empty: keep captures in the
	// spool only); UploadToken its write token.
	UploadTo    string
	UploadToken string
	// UploadBackoff is the first wait before a failed upload is tried
	// again (default 30 s), doubled per failure up to 30 minutes.
	UploadBackoff time.Duration
	// Analysis configures the reports written next to each bundle.
	Analysis analysis.Options
	// Log receives the agent's log lines (default: standard error).
	Log io.Writer
	// Version is written as the tool of bundles and the User-Agent of
	// uploads.
	Version string
}

// Agent is a running node agent.
type Agent struct {
	cfg   Config
	m     *metrics
	spool *Spool
	ln    net.Listener
	logMu sync.Mutex
	// refreshing serializes looking for processes (watch loop, webhook).
	refreshing sync.Mutex

	mu       sync.Mutex
	targets  map[key]*target
	noPprof  map[key]time.Time // processes without an endpoint, when last looked at
	captures sync.WaitGroup
	slot     chan struct{} // one capture at a time on a node
	wake     chan struct{} // a new entry is ready for upload
	runCtx   context.Context

	// history is the rolling profile window (nil when disabled).
	history *History
	// lastAlertScan is when an alert last looked for new processes.
	lastAlertScan time.Time
	// webhookSlots bounds the notifications handled at once.
	webhookSlots chan struct{}
	// quiet bounds the lines logged about alerts (loglimit.go).
	quiet logLimit
}

// target is one watched process.
type target struct {
	proc        Process
	client      *http.Client // scrapes this process (from its network namespace)
	url         string
	ports       []int
	ep          endpoint
	series      series
	last        capture.Totals
	busy        bool
	lastCapture time.Time
	// ruleHeld is the refusal of the growth rule's trigger last counted
	// ("busy" or "cooldown" and the capture it waits for): the rule fires
	// at every watch sample, and one capture or cooldown is counted once.
	ruleHeld string
}

// New checks the configuration, opens the spool and binds the listen
// address; [Agent.Run] starts the work.
func New(cfg Config) (*Agent, error) {
	if cfg.Node == "" {
		cfg.Node = capture.DefaultNode()
	}
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.UploadBackoff <= 0 {
		cfg.UploadBackoff = uploadBackoff
	}
	if cfg.WatchEvery <= 0 {
		cfg.WatchEvery = DefaultWatchEvery
	}
	if cfg.Cooldown < 0 {
		return nil, fmt.Errorf("agent: negative cooldown %v", cfg.Cooldown)
	}
	if cfg.Cooldown == 0 {
		cfg.Cooldown = DefaultCooldown
	}
	if cfg.SpoolDir == "" {
		return nil, errors.New("agent: no spool directory")
	}
	if cfg.Select.Empty() {
		return nil, errors.New("agent: no process selected (give pids, executable names or all)")
	}
	if cfg.Log == nil {
		cfg.Log = os.Stderr
	}
	if !httpguard.IsLoopback(cfg.Listen) && cfg.WebhookToken == "" {
		return nil, fmt.Errorf("agent: %s is not a loopback address; give a webhook token (--webhook-token or $LEAKSCOPE_WEBHOOK_TOKEN) for Alertmanager to send", cfg.Listen)
	}
	a := &Agent{cfg: cfg, m: newMetrics(),
		targets: map[key]*target{}, noPprof: map[key]time.Time{},
		slot: make(chan struct{}, 1), wake: make(chan struct{}, 1),
		webhookSlots: make(chan struct{}, maxWebhookInFlight)}
	sp, err := OpenSpool(cfg.SpoolDir, cfg.SpoolMax, a.logf)
	if err != nil {
		return nil, err
	}
	a.spool = sp
	if a.history, err = OpenHistory(filepath.Join(cfg.SpoolDir, historyDir), cfg.History, a.logf); err != nil {
		return nil, err
	}
	sp.Uploads = cfg.UploadTo != ""
	if a.ln, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	return a, nil
}

// Addr is the address the agent listens on.
func (a *Agent) Addr() string { return a.ln.Addr().String() }

// Run watches, triggers, captures and uploads until ctx is cancelled, then
// finishes captures in flight (they end early, cleanly) and returns.
func (a *Agent) Run(ctx context.Context) error {
	a.runCtx = ctx
	mux := http.NewServeMux()
	mux.Handle("POST /alerts", a.webhookHandler())
	mux.Handle("GET /metrics", a.m.handler())
	mux.HandleFunc("GET /status", a.statusHandler)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	srv := &http.Server{Handler: a.guard(mux), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, MaxHeaderBytes: 64 << 10}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(a.ln) }()
	a.logf("agent on node %s: webhook http://%s/alerts, metrics http://%s/metrics; spool %s", a.cfg.Node, a.Addr(), a.Addr(), a.cfg.SpoolDir)
	a.reportRecovered()
	a.updateSpool()

	var loops sync.WaitGroup
	loops.Go(func() { a.watchLoop(ctx) })
	loops.Go(func() { a.uploadLoop(ctx) })
	var err error
	select {
	case err = <-errc:
		err = fmt.Errorf("agent: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	srv.Shutdown(sctx)
	cancel()
	loops.Wait()
	a.captures.Wait()
	return err
}

// logf writes one log line.
func (a *Agent) logf(format string, args ...any) {
	a.logMu.Lock()
	defer a.logMu.Unlock()
	fmt.Fprintf(a.cfg.Log, "%s agent: %s\n", time.Now().UTC().Format(time.RFC3339), escape(fmt.Sprintf(format, args...)))
}

// logWriter is an io.Writer of prefixed log lines (for the capture's
// notices).
type logWriter struct {
	a      *Agent
	prefix string
}

func (w logWriter) Write(p []byte) (int, error) {
	for _, line := range splitLines(string(p)) {
		w.a.logf("%s%s", w.prefix, line)
	}
	return len(p), nil
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' || s[i] == '\r' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
