package agent

import (
	"context"
	"net/http"
	"os"
	"sort"
	"time"

	"github.com/leakscope/leakscope/capture"
)

// watchLoop refreshes the watched processes and samples them every
// WatchEvery.
func (a *Agent) watchLoop(ctx context.Context) {
	tick := time.NewTicker(a.cfg.WatchEvery)
	defer tick.Stop()
	for {
		a.refresh(ctx)
		a.sampleAll(ctx)
		a.pruneHistory()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// refresh finds the selected processes and their pprof endpoints, and
// forgets processes that went away.
func (a *Agent) refresh(ctx context.Context) {
	a.refreshing.Lock()
	defer a.refreshing.Unlock()
	a.m.scans.Inc()
	cands, err := a.cfg.Select.candidates()
	if err != nil {
		a.logf("%v", err)
		return
	}
	seen := map[key]bool{}
	for _, p := range cands {
		k := p.key()
		seen[k] = true
		a.mu.Lock()
		_, known := a.targets[k]
		last, tried := a.noPprof[k]
		a.mu.Unlock()
		if known || (tried && time.Since(last) < rediscoverEvery) {
			continue
		}
		t, err := a.discover(ctx, p)
		a.mu.Lock()
		if err != nil {
			if !tried && !a.cfg.Select.All {
				a.logf("pid %d (%s): %v; looking again every %v", p.PID, p.Name(), err, rediscoverEvery)
			}
			a.noPprof[k] = time.Now()
		} else {
			delete(a.noPprof, k)
			a.targets[k] = t
			a.m.watch(a.cfg.Node, t.proc)
			a.logf("watching pid %d (%s%s) at %s", p.PID, p.Name(), podSuffix(p), t.url)
		}
		a.mu.Unlock()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, t := range a.targets {
		if !seen[k] && !t.busy {
			a.logf("pid %d (%s) is gone; no longer watched", t.proc.PID, t.proc.Name())
			a.m.forget(a.cfg.Node, t.proc)
			delete(a.targets, k)
		}
	}
	for k := range a.noPprof {
		if !seen[k] {
			delete(a.noPprof, k)
		}
	}
	a.m.watched.Set(float64(len(a.targets)))
}

func podSuffix(p Process) string {
	if p.Pod == "" {
		return ""
	}
	return ", pod " + p.Pod
}

// discover finds a process's pprof endpoint (from its listening sockets,
// as `capture --pid` does). With Select.All, processes that are not Go
// programs are passed over without probing.
func (a *Agent) discover(ctx context.Context, p Process) (*target, error) {
	if a.cfg.Select.All && !isGo(p.PID) {
		return nil, errNotGo
	}
	client := capture.NewScrapeClient(p.PID)
	url, err := capture.DiscoverURL(ctx, client, p.PID)
	if err != nil {
		return nil, err
	}
	t := &target{proc: p, client: client, url: url, lastCapture: a.spool.LastCapture(p)}
	if ls, err := capture.ProcessListeners(p.PID); err == nil {
		for _, l := range ls {
			t.ports = append(t.ports, int(l.Addr.Port()))
			t.ep.listeners = append(t.ep.listeners, l.Addr)
		}
	}
	t.ep.local, _ = localAddrs(p.PID)
	host, _ := os.Hostname()
	t.ep.names = []string{a.cfg.Node, host, p.Pod}
	return t, nil
}

type agentError string

func (e agentError) Error() string { return string(e) }

const errNotGo = agentError("not a Go program")

// sampleAll takes one watch sample of every target and applies the rule.
func (a *Agent) sampleAll(ctx context.Context) {
	a.mu.Lock()
	ts := make([]*target, 0, len(a.targets))
	for _, t := range a.targets {
		ts = append(ts, t)
	}
	a.mu.Unlock()
	for _, t := range ts {
		if ctx.Err() != nil {
			return
		}
		sctx, cancel := context.WithTimeout(ctx, a.cfg.WatchEvery)
		tot, err := a.watchSample(sctx, t)
		cancel()
		if err != nil {
			a.m.watchErrs.Inc()
			continue
		}
		lv := a.m.labels(a.cfg.Node, t.proc)
		a.m.goroutines.WithLabelValues(lv...).Set(float64(tot.Goroutines))
		a.m.heap.WithLabelValues(lv...).Set(float64(tot.HeapInuse))
		a.mu.Lock()
		t.last = tot
		t.series.add(tot, a.cfg.Rule.Window)
		why, fire := a.cfg.Rule.evaluate(&t.series, tot.TS)
		a.mu.Unlock()
		if fire {
			a.trigger(t, "rule", "growth rule: "+why, nil)
		}
	}
}

// findTarget returns the watched process an alert names, and the pids of
// others it names too (an ambiguous alert starts no capture). When none
// matches, it looks for new processes, at most once per notification
// (scan) and once per minScanEvery.
func (a *Agent) findTarget(al Alert, scan *scanOnce) (*target, string, []int) {
	for attempt := 0; attempt < 2; attempt++ {
		var found []*target
		var label string
		a.mu.Lock()
		for _, t := range a.targets {
			if l, ok := matches(al, a.cfg.Node, t.proc, t.ep); ok {
				found, label = append(found, t), l
			}
		}
		a.mu.Unlock()
		if len(found) > 0 {
			sort.Slice(found, func(i, j int) bool { return found[i].proc.PID < found[j].proc.PID })
			var others []int
			for _, t := range found[1:] {
				others = append(others, t.proc.PID)
			}
			return found[0], label, others
		}
		if attempt == 0 && !scan.do() {
			break
		}
	}
	return nil, "", nil
}

// minScanEvery is the least time between two looks for new processes
// asked by alerts.
const minScanEvery = 2 * time.Second

// scanOnce lets one notification look for new processes once.
type scanOnce struct {
	a    *Agent
	done bool
	// entries are the spool's, read once per notification for the
	// resolved alerts it carries.
	entries []*Entry
}

// do looks for new processes unless this notification did already, or
// one looked less than minScanEvery ago; it reports whether it looked.
func (s *scanOnce) do() bool {
	a := s.a
	if s.done || a.runCtx == nil {
		return false
	}
	s.done = true
	a.mu.Lock()
	recent := time.Since(a.lastAlertScan) < minScanEvery
	if !recent {
		a.lastAlertScan = time.Now()
	}
	a.mu.Unlock()
	if recent {
		return false
	}
	ctx, cancel := context.WithTimeout(a.runCtx, 10*time.Second)
	defer cancel()
	a.refresh(ctx)
	return true
}

// trigger starts a capture of t unless one is running or the last one
// ended less than Cooldown ago (also before the agent restarted: see
// Spool.LastCapture), and returns what it did.
func (a *Agent) trigger(t *target, source, why string, alert *AlertInfo) (result, captureID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	result = "started"
	switch {
	case a.runCtx == nil || a.runCtx.Err() != nil:
		result = "busy"
	case t.busy:
		result = "busy"
	case !t.lastCapture.IsZero() && time.Since(t.lastCapture) < a.cfg.Cooldown:
		result = "cooldown"
	}
	if held := result + " " + t.lastCapture.String(); source != "rule" || result == "started" || held != t.ruleHeld {
		a.m.triggers.WithLabelValues(source, result).Inc()
		if source == "rule" {
			t.ruleHeld = held
		}
	}
	if result != "started" {
		return result, ""
	}
	t.busy = true
	t.series.since = time.Time{}
	captureID = capture.NewCaptureID()
	a.logf("pid %d (%s): capture %s triggered by %s%s", t.proc.PID, t.proc.Name(), captureID, why, a.linkSuffix(captureID))
	a.captures.Go(func() { a.captureJob(a.runCtx, t, why, alert, captureID) })
	return result, captureID
}

// status is the answer of GET /status.
type status struct {
	Node    string         `json:"node"`
	Targets []targetStatus `json:"targets"`
	Spool   []*Entry       `json:"spool"`
	Rule    Rule           `json:"rule"`
	Upload  string         `json:"upload_to,omitempty"`
}

type targetStatus struct {
	PID         int       `json:"pid"`
	Exe         string    `json:"exe"`
	Pod         string    `json:"pod,omitempty"`
	URL         string    `json:"url"`
	Ports       []int     `json:"ports"`
	Goroutines  int64     `json:"goroutines"`
	HeapInuse   int64     `json:"heap_inuse_bytes"`
	Sampled     time.Time `json:"sampled,omitzero"`
	Capturing   bool      `json:"capturing"`
	LastCapture time.Time `json:"last_capture,omitzero"`
}

func (a *Agent) statusHandler(w http.ResponseWriter, _ *http.Request) {
	st := status{Node: a.cfg.Node, Rule: a.cfg.Rule, Upload: a.cfg.UploadTo, Targets: []targetStatus{}}
	a.mu.Lock()
	for _, t := range a.targets {
		st.Targets = append(st.Targets, targetStatus{PID: t.proc.PID, Exe: t.proc.Exe, Pod: t.proc.Pod, URL: t.url, Ports: t.ports,
			Goroutines: t.last.Goroutines, HeapInuse: t.last.HeapInuse, Sampled: t.last.TS, Capturing: t.busy, LastCapture: t.lastCapture})
	}
	a.mu.Unlock()
	sort.Slice(st.Targets, func(i, j int) bool { return st.Targets[i].PID < st.Targets[j].PID })
	st.Spool, _ = a.spool.Entries()
	if st.Spool == nil {
		st.Spool = []*Entry{}
	}
	writeJSON(w, http.StatusOK, st)
}
