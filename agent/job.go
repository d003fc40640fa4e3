package agent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/report"
	"github.com/leakscope/leakscope/capture"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/killpoint"
)

// captureJob captures t into a new spool entry, writes its report and
// postmortem, and hands the entry to the uploader. Captures on a node run
// one at a time.
func (a *Agent) captureJob(ctx context.Context, t *target, why string, alert *AlertInfo, captureID string) {
	defer func() {
		a.mu.Lock()
		t.busy, t.lastCapture = false, time.Now()
		a.mu.Unlock()
	}()
	select {
	case a.slot <- struct{}{}:
		defer func() { <-a.slot }()
	case <-ctx.Done():
		return
	}
	e, err := a.spool.New(t.proc, why, time.Now())
	if err == nil {
		e.Alert, e.CaptureID = alert, captureID
		err = a.spool.Save(e)
	}
	if err != nil {
		a.logf("pid %d: %v", t.proc.PID, err)
		a.m.captures.WithLabelValues("failed").Inc()
		return
	}
	o := a.cfg.Capture
	o.PID, o.URL, o.Out, o.Node, o.CaptureID = t.proc.PID, t.url, a.spool.BundlePath(e), a.cfg.Node, captureID
	o.History = a.history.Files(t.proc.key(), time.Now())
	o.FirstDump = a.firstAnswer(e, t.proc.PID, e.Created)
	o.Trigger = entryTrigger(e, a.cfg.Node)
	if o.Tool == "" {
		o.Tool = "leakscope-agent " + a.cfg.Version
	}
	sum, err := capture.Run(ctx, o, logWriter{a: a, prefix: fmt.Sprintf("pid %d: ", t.proc.PID)})
	e.Ended = time.Now().UTC()
	killpoint.At("agent:captured")
	if err != nil && sum.Bundle == "" {
		e.State, e.Error = StateFailed, err.Error()
		a.spool.Save(e)
		a.m.captures.WithLabelValues("failed").Inc()
		a.logf("pid %d: capture failed: %v", t.proc.PID, err)
		a.updateSpool()
		return
	}
	if err != nil {
		e.Error = err.Error()
	}
	e.Interrupted = ctx.Err() != nil
	if b, err := bundle.Open(sum.Bundle); err == nil {
		if empty, err := isEmpty(b); err == nil && empty {
			e.State, e.Error = StateEmpty, "the capture ended before it recorded anything ("+sum.Reason+")"
			a.spool.Save(e)
			a.m.captures.WithLabelValues("empty").Inc()
			a.logf("%s: pid %d: %s; not uploaded", e.Name, t.proc.PID, e.Error)
			a.updateSpool()
			return
		}
	}
	a.m.captures.WithLabelValues("ok").Inc()
	if err := a.writeReports(e); err != nil {
		a.logf("%s: %v", e.Name, err)
		e.Error = err.Error()
	}
	killpoint.At("agent:reported")
	e.State = StateReady
	if err := a.spool.Save(e); err != nil {
		a.logf("%v", err)
	}
	a.logf("%s: captured pid %d (%s); %d suspects%s; report %s", e.Name, t.proc.PID, sum.Reason, e.Suspects, topSuffix(e), a.spool.Path(e, reportFile))
	a.enforceSpool()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

func topSuffix(e *Entry) string {
	if e.Top == "" {
		return ""
	}
	return ", top " + e.Top
}

// writeReports analyses the entry's bundle and writes report.md and
// postmortem.md beside it, through the analysis and report packages.
func (a *Agent) writeReports(e *Entry) error {
	b, err := bundle.Open(a.spool.BundlePath(e))
	if err != nil {
		return err
	}
	if e.Interrupted {
		// No one writes the bundle any more, however recent its last flush.
		b.Manifest.MarkWriterGone()
	}
	if b.Manifest.Trigger == nil {
		// A bundle its capture wrote no trigger into (an older agent's).
		b.Manifest.Trigger = entryTrigger(e, a.cfg.Node)
	}
	mem := memory.DefaultAllocator
	opts := a.cfg.Analysis
	opts.Now = time.Now()
	rep, err := analysis.Analyze(b, mem, opts)
	if err != nil {
		return fmt.Errorf("analyse: %w", err)
	}
	e.Suspects = len(rep.Suspects)
	if len(rep.Suspects) > 0 {
		e.Top = TopSuspect(rep)
	}
	for _, f := range []struct {
		name       string
		postmortem bool
	}{{reportFile, false}, {postmortemFile, true}} {
		var doc bytes.Buffer
		if err := report.Markdown(&doc, rep, report.Options{Postmortem: f.postmortem, Bundle: b, Mem: mem}); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
		if err := os.WriteFile(a.spool.Path(e, f.name), doc.Bytes(), 0o640); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
	}
	return nil
}

// reportRecovered writes the reports of ready entries that have none (a
// capture the agent was killed during, recovered by OpenSpool).
func (a *Agent) reportRecovered() {
	entries, err := a.spool.Entries()
	if err != nil {
		a.logf("%v", err)
		return
	}
	for _, e := range entries {
		if e.State != StateReady {
			continue
		}
		if _, err := os.Stat(a.spool.Path(e, reportFile)); err == nil {
			continue
		}
		if err := a.writeReports(e); err != nil {
			a.logf("%s: %v", e.Name, err)
			continue
		}
		if err := a.spool.Save(e); err != nil {
			a.logf("%v", err)
		}
		a.logf("%s: recovered; %d suspects%s; report %s", e.Name, e.Suspects, topSuffix(e), a.spool.Path(e, reportFile))
	}
}

// enforceSpool keeps the spool within its bound and updates its gauges.
func (a *Agent) enforceSpool() {
	dropped, err := a.spool.Enforce()
	if err != nil {
		a.logf("%v", err)
	}
	a.m.dropped.Add(float64(len(dropped)))
	a.updateSpool()
}

// updateSpool sets the spool gauges.
func (a *Agent) updateSpool() {
	if n, count, err := a.spool.Usage(); err == nil {
		a.m.spoolBytes.Set(float64(n))
		a.m.spoolCount.Set(float64(count))
	}
}
