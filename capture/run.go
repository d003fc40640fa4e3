package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/srclines"
)

// Reasons a capture ended, as reported in [Summary.Reason].
const (
	EndDuration    = "duration reached"
	EndInterrupted = "interrupted"
)

// capturer is the state of one [Run].
type capturer struct {
	opts   Options
	base   string
	client *http.Client
	w      *bundle.Writer
	clock  *clockSync
	log    *progress
	start  time.Time
	ebpf   *ebpfSource

	stop      context.CancelCauseFunc
	windows   sync.WaitGroup
	leakGone  atomic.Bool // goroutineleak profile not served
	tracing   atomic.Bool // a trace window is in flight
	profiling atomic.Bool // a CPU profile window is in flight
	gone      atomic.Pointer[string]
	valid     atomic.Int64                  // artifacts that were what their endpoint serves
	notPprof  atomic.Pointer[NotPprofError] // why the capture was stopped
	// sawNotPprof is the first reply that was not what its endpoint serves.
	sawNotPprof atomic.Pointer[NotPprofError]

	first firstAnswer

	srcMu sync.Mutex
	src   *srclines.Snapshotter

	mu    sync.Mutex
	stats map[string]*sourceStats // by endpoint name (dump, goroutine, heap, ..., cpu, trace)
}

// sourceStats counts what one endpoint produced.
type sourceStats struct {
	Artifacts int64
	Bytes     int64
	Errors    int64
	LastError string
}

// errTargetGone is the cancel cause when the target exits or stops
// answering.
type errTargetGone struct{ why string }

func (e errTargetGone) Error() string { return e.why }

// Run records the target described by o into the bundle o.Out until
// o.Duration passes, ctx is cancelled (SIGINT, SIGTERM) or the target exits
// or stops answering; each of those ends the capture cleanly. It writes
// live progress and one-off notices (such as eBPF being unavailable) to
// progress, which may be nil. The returned Summary describes what was
// recorded; an error means the capture could not start or the bundle could
// not be written.
func Run(ctx context.Context, o Options, progress io.Writer) (Summary, error) {
	o = o.withDefaults()
	if err := o.Validate(); err != nil {
		return Summary{}, err
	}
	if progress == nil {
		progress = io.Discard
	}
	c := &capturer{
		opts:   o,
		client: newClient(o.PID),
		log:    newProgress(progress),
		stats:  map[string]*sourceStats{},
	}
	defer c.client.CloseIdleConnections()
	if o.Nice > 0 {
		if err := setNice(o.Nice); err != nil {
			c.log.Notef("%v; running at normal priority", err)
		}
	}
	if err := c.resolveTarget(ctx); err != nil {
		return Summary{}, err
	}
	if err := c.createBundle(); err != nil {
		return Summary{}, err
	}
	c.start = time.Now()
	c.ingestHistory()
	reason := c.record(ctx)
	return c.finish(reason)
}

// createBundle creates the bundle o.Out with the target's manifest and
// takes the first clock pair, which dates everything recorded.
func (c *capturer) createBundle() error {
	w, err := bundle.Create(c.opts.Out, c.manifest(), memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("create bundle: %w", err)
	}
	c.w = w
	w.RecordFlushes()
	c.clock = &clockSync{w: w}
	p := c.clock.take()
	w.Update(func(m *bundle.Manifest) {
		m.Clock = bundle.Clock{Method: "clock_sync", OffsetNS: p.OffsetNS(),
			Detail: fmt.Sprintf("(CLOCK_MONOTONIC, wall) pairs every %v in clock_sync; ts = mono_ns + offset of the latest pair; trace windows use the offset at their end", c.opts.ClockSyncEvery)}
	})
	return nil
}

// record runs the capture's loops until the duration passes, ctx is
// cancelled or the target goes, then lets the windows in flight finish,
// takes the closing snapshots and stops the loops. It returns why the
// capture ended.
func (c *capturer) record(ctx context.Context) error {
	o := c.opts
	runCtx, stop := context.WithCancelCause(ctx)
	c.stop = stop
	if o.Duration > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(runCtx, o.Duration, errors.New(EndDuration))
		defer cancel()
	}
	defer stop(nil)
	// Windows already started finish after the end (at most one window
	// plus slack), so the last trace and CPU profile are usable.
	winCtx, winCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer winCancel()
	c.startFlight(winCtx)

	c.startEBPF(runCtx)

	var bg sync.WaitGroup
	bg.Go(func() { c.clockLoop(runCtx) })
	bg.Go(func() { c.progressLoop(runCtx) })
	if c.httpSources() {
		c.httpLoop(runCtx, winCtx)
	}
	<-runCtx.Done()
	reason := endReason(ctx, runCtx)
	c.log.Notef("stopping: %s", reason)

	c.waitWindows(winCancel)
	if _, gone := reason.(errTargetGone); !gone && !o.NoSnapshots && c.notPprof.Load() == nil {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		c.snapshots(fctx)
		cancel()
	}
	bg.Wait()
	if c.ebpf != nil {
		c.ebpf.close()
	}
	return reason
}

// finish records the last clock pair and the sources, waits for the
// first answer, completes the manifest and closes the bundle, and sums up
// the capture that ended for reason.
func (c *capturer) finish(reason error) (Summary, error) {
	c.clock.take()
	c.snapshotSources()
	c.first.wg.Wait()
	c.finishManifest()
	c.log.Done()
	closeErr := c.w.Close()
	sum := c.summary(reason.Error())
	if closeErr != nil {
		return sum, fmt.Errorf("close bundle: %w", closeErr)
	}
	if np := c.notPprof.Load(); np != nil {
		return sum, fmt.Errorf("capture stopped, nothing recorded: %w", np)
	}
	return sum, nil
}

// endReason turns the run context's cause into the reason reported.
func endReason(parent, run context.Context) error {
	cause := context.Cause(run)
	if parent.Err() != nil {
		return errors.New(EndInterrupted)
	}
	if cause == nil || errors.Is(cause, context.Canceled) {
		return errors.New(EndInterrupted)
	}
	return cause
}

// newClient returns the client that scrapes the target. It does not keep
// connections alive: an idle keep-alive connection parks a goroutine in the
// target's HTTP server, which the capture would then record as a growing
// group of its own making. A handful of connects per interval cost nothing.
// With a pid whose network namespace is not the capturer's own (a process
// in a container), connections are made from inside that namespace, so
// its loopback and wildcard listeners are reachable (see [netnsDialer]).
func newClient(pid int) *http.Client {
	dial := (&net.Dialer{Timeout: 5 * time.Second}).DialContext
	if d := netnsDialer(pid); d != nil {
		dial = d
	}
	return &http.Client{Transport: &http.Transport{
		Proxy:              nil,
		DialContext:        dial,
		DisableKeepAlives:  true,
		DisableCompression: true,
	}}
}

// resolveTarget finds the base URL (discovering it from the pid when no URL
// was given) and checks that it serves net/http/pprof.
func (c *capturer) resolveTarget(ctx context.Context) error {
	if c.opts.PID > 0 && !processAlive(c.opts.PID) {
		return fmt.Errorf("no process with pid %d", c.opts.PID)
	}
	if c.opts.PID > 0 {
		if err := checkGoProcess(c.opts.PID); err != nil {
			if c.opts.URL == "" {
				return err
			}
			// A URL names the pprof endpoint itself: the executable may be
			// an emulator (qemu-user) or a wrapper running the Go program.
			c.log.Notef("%v; carrying on with %s", err, c.opts.URL)
		}
	}
	if !c.httpSources() {
		return nil
	}
	if c.opts.URL == "" {
		u, err := DiscoverURL(ctx, c.client, c.opts.PID)
		if err != nil {
			return err
		}
		c.base = u
		c.log.Notef("found pprof endpoint of pid %d at %s", c.opts.PID, u)
		return nil
	}
	c.base = normalizeURL(c.opts.URL)
	if err := probePprof(ctx, c.client, c.base); err != nil {
		return fmt.Errorf("target %s does not serve net/http/pprof: %w", c.base, err)
	}
	return nil
}

// DefaultNode is the node name a capture records when none is given:
// $NODE_NAME (a DaemonSet sets it from the downward API's spec.nodeName;
// the host name of a pod is its own name), else the host name.
func DefaultNode() string {
	if n := os.Getenv("NODE_NAME"); n != "" {
		return n
	}
	h, _ := os.Hostname()
	return h
}

// httpSources reports whether any pprof endpoint is scraped.
func (c *capturer) httpSources() bool {
	return !c.opts.NoSnapshots || c.opts.CPUWindow > 0 || c.opts.TraceWindow > 0
}

// manifest builds the initial manifest: every source "running".
func (c *capturer) manifest() bundle.Manifest {
	o := c.opts
	id := o.CaptureID
	if id == "" {
		id = NewCaptureID()
	}
	m := bundle.NewManifest(id, o.Tool)
	m.Node = o.Node
	if m.Node == "" {
		m.Node = DefaultNode()
	}
	m.Start = time.Now()
	m.Trigger = o.Trigger
	if o.PID > 0 {
		t, err := TargetInfo(o.PID)
		if err != nil {
			c.log.Notef("target info: %v", err)
		}
		m.Target = t
	} else if at, from, ok := urlProcessStart(c.base); ok {
		// A --url target on this host: its start bounds every onset.
		m.Target.ProcessStart, m.Target.ProcessStartFrom = at, from
	}
	m.Target.URL = c.base
	iv := o.Interval.String()
	if !o.NoSnapshots {
		s := m.Source(bundle.SourceDump)
		s.Status = bundle.StatusRunning
		s.Settings = map[string]string{"interval": iv, "endpoint": epDump.path}
	}
	if !o.NoSnapshots || o.CPUWindow > 0 {
		s := m.Source(bundle.SourcePprof)
		s.Status = bundle.StatusRunning
		s.Settings = map[string]string{"interval": iv}
		if !o.NoSnapshots {
			s.Settings["profiles"] = "goroutine,heap,allocs,goroutineleak"
		}
		if o.CPUWindow > 0 {
			s.Settings["cpu_window"] = o.CPUWindow.String()
		}
	}
	if o.TraceWindow > 0 {
		s := m.Source(bundle.SourceTrace)
		s.Status = bundle.StatusRunning
		s.Settings = map[string]string{"interval": iv, "window": o.TraceWindow.String()}
	}
	s := m.Source(bundle.SourceEBPF)
	if o.NoEBPF {
		s.Status, s.Detail = bundle.StatusUnavailable, "disabled with --no-ebpf"
	} else {
		s.Status = bundle.StatusRunning
	}
	return m
}

// NewCaptureID returns a capture id made from the current time (UTC, to
// the nanosecond).
func NewCaptureID() string {
	return time.Now().UTC().Format("20060102T150405.000000000Z")
}

// httpLoop runs a scrape round at once and then every interval until ctx
// ends.
func (c *capturer) httpLoop(ctx, winCtx context.Context) {
	t := time.NewTicker(c.opts.Interval)
	defer t.Stop()
	for {
		began := time.Now()
		c.round(ctx, winCtx)
		// A round longer than the interval makes the ticker drop ticks:
		// say so, since the bundle then holds fewer snapshots than asked.
		if d := time.Since(began); d > c.opts.Interval && ctx.Err() == nil {
			c.log.Notef("falling behind: a snapshot round took %v, longer than the %v interval (the target answers slowly); snapshots are taken as often as it allows",
				d.Round(time.Millisecond), c.opts.Interval)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// round starts the CPU and trace windows (when they can finish before the
// end) and takes the instant snapshots.
func (c *capturer) round(ctx, winCtx context.Context) {
	left := time.Duration(1<<62 - 1)
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
	}
	for _, ep := range c.windowEndpoints() {
		if ep.window > left {
			continue
		}
		busy := &c.tracing
		if ep.kind != bundle.SourceTrace {
			busy = &c.profiling
		}
		// The runtime allows one trace and one CPU profile at a time: when
		// the previous window is still being written, skip this one.
		if !busy.CompareAndSwap(false, true) {
			continue
		}
		c.windows.Go(func() {
			defer busy.Store(false)
			c.fetch(ctx, winCtx, ep)
			if c.opts.NoSnapshots {
				c.checkHonest()
			}
		})
	}
	c.snapshots(ctx)
	c.checkHonest()
	c.snapshotSources()
}

// snapshotSources records the source of the functions the frames seen so
// far name, read from the target's files at their build paths (first under
// /proc/PID/root, where a containerised target's files are).
func (c *capturer) snapshotSources() {
	c.srcMu.Lock()
	defer c.srcMu.Unlock()
	if c.src == nil {
		o := srclines.Options{Source: "capture"}
		if c.opts.PID > 0 {
			o.Roots = []string{fmt.Sprintf("/proc/%d/root", c.opts.PID)}
		}
		c.src = srclines.New(o)
	}
	if _, err := c.src.Snapshot(c.w, memory.DefaultAllocator); err != nil {
		c.log.Notef("source lines: %v", err)
	}
}

// checkHonest ends the capture when the target has answered with nothing
// but replies that are not profiles: it is not a pprof endpoint, and a
// bundle of HTML pages is no capture.
func (c *capturer) checkHonest() {
	if c.valid.Load() > 0 {
		return
	}
	if np := c.sawNotPprof.Load(); np != nil && c.notPprof.CompareAndSwap(nil, np) {
		c.stop(np)
	}
}

func (c *capturer) windowEndpoints() []endpoint {
	var eps []endpoint
	if c.opts.TraceWindow > 0 {
		eps = append(eps, traceEndpoint(c.opts.TraceWindow))
	}
	if c.opts.CPUWindow > 0 {
		eps = append(eps, cpuEndpoint(c.opts.CPUWindow))
	}
	return eps
}

// snapshotGrace is how long a snapshot request in flight when the capture
// ends may take to finish.
const snapshotGrace = 10 * time.Second

// snapshots takes the dump and instant profiles, one after another. Once
// ctx ends no new one starts, but the one in flight may finish (within
// snapshotGrace): cut short, a dump would stand beside the final one as a
// snapshot of a few goroutines, and a growing group would seem to shrink.
func (c *capturer) snapshots(ctx context.Context) {
	if c.opts.NoSnapshots {
		return
	}
	reqCtx, cancel := graceContext(ctx, snapshotGrace)
	defer cancel()
	for _, ep := range []endpoint{epDump, epGoroutine, epHeap, epAllocs, epLeak} {
		if ctx.Err() != nil || c.gone.Load() != nil {
			return
		}
		if ep.profile == epLeak.profile && c.leakGone.Load() {
			continue
		}
		c.fetch(ctx, reqCtx, ep)
	}
}

// graceContext returns a context that ends grace after ctx ends.
func graceContext(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	g, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(grace, cancel) })
	return g, func() { stop(); cancel() }
}

// fetch scrapes one endpoint under reqCtx and accounts for the result;
// runCtx tells whether the capture is still running.
func (c *capturer) fetch(runCtx, reqCtx context.Context, ep endpoint) {
	a, err := c.fetchArtifact(reqCtx, ep)
	var se *StatusError
	if ep.profile == epLeak.profile && errors.As(err, &se) && se.Code == http.StatusNotFound {
		if !c.leakGone.Swap(true) {
			c.log.Notef("goroutineleak profile not served by the target (%s); skipping it", leakProfileHint(c.w.Manifest().Target.GoVersion))
		}
		return
	}
	key := ep.profile
	if key == "" {
		key = ep.kind
	}
	c.mu.Lock()
	st := c.stats[key]
	if st == nil {
		st = &sourceStats{}
		c.stats[key] = st
	}
	failed := err != nil || a.Status == bundle.StatusFailed
	if a.Name != "" && a.Status != bundle.StatusFailed {
		st.Artifacts++
		st.Bytes += a.Size
	}
	if failed {
		st.Errors++
		st.LastError = a.Detail
		if err != nil {
			st.LastError = err.Error()
		}
	}
	c.mu.Unlock()
	if err == nil {
		return
	}
	var np *NotPprofError
	if errors.As(err, &np) {
		c.sawNotPprof.CompareAndSwap(nil, np)
	}
	if reqCtx.Err() != nil {
		return // the capture is ending
	}
	if errors.Is(err, errTransport) {
		if why := c.targetGone(reqCtx); why != "" {
			c.endTargetGone(why)
			return
		}
	}
	c.log.Notef("%v", err)
}

// targetGone checks whether the target has exited or stopped answering,
// and says how; "" means it is still there.
func (c *capturer) targetGone(ctx context.Context) string {
	if c.opts.PID > 0 && !processAlive(c.opts.PID) {
		return fmt.Sprintf("target process %d exited", c.opts.PID)
	}
	if c.base == "" {
		return ""
	}
	if err := probePprof(ctx, c.client, c.base); err != nil && ctx.Err() == nil {
		return fmt.Sprintf("target stopped answering: %v", err)
	}
	return ""
}

// endTargetGone ends the capture because the target is gone.
func (c *capturer) endTargetGone(why string) {
	why = fmt.Sprintf("%s at %s", why, time.Now().UTC().Format(time.RFC3339))
	if c.gone.CompareAndSwap(nil, &why) {
		c.stop(errTargetGone{why})
	}
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) S ...: the state follows the last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return true
	}
	st := s[i+2]
	return st != 'Z' && st != 'X'
}

// waitWindows waits for windows in flight, at most one window plus slack,
// then cancels what is left.
func (c *capturer) waitWindows(cancel context.CancelFunc) {
	done := make(chan struct{})
	go func() { c.windows.Wait(); close(done) }()
	limit := max(c.opts.TraceWindow, c.opts.CPUWindow) + fetchSlack
	select {
	case <-done:
	case <-time.After(limit):
		cancel()
		<-done
	}
}

// clockLoop takes a clock pair every ClockSyncEvery.
func (c *capturer) clockLoop(ctx context.Context) {
	t := time.NewTicker(c.opts.ClockSyncEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.clock.take()
		}
	}
}

// progressLoop refreshes the progress line every second and notices a
// target process that exited.
func (c *capturer) progressLoop(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if c.opts.PID > 0 && !processAlive(c.opts.PID) {
				c.endTargetGone(fmt.Sprintf("target process %d exited", c.opts.PID))
				return
			}
			c.log.Status(c.statusLine())
		}
	}
}

// logf reports a one-off notice.
func (c *capturer) logf(format string, args ...any) { c.log.Notef(format, args...) }
