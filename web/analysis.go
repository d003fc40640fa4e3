package web

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/leakscope/leakscope/analysis"
)

// A capture's analysis runs on a goroutine of its own, never on a
// request's, and holds no lock a request needs. A view that needs the
// report (the report itself, a suspect's members, flame graph, lanes or
// timeline) waits for it; the capture list, /metrics and the fleet view
// show only a report that is ready — in memory, or kept beside the bundle
// (reportcache.go) — and otherwise start the analysis and say it is
// pending. An upload starts its capture's analysis at once and answers
// once it has finished, or after uploadWait. At most maxAnalyses run at
// a time, and as many more that requests wait for (a view is not queued
// behind the listings' analyses of other captures), each under the
// store's deadline and heap budget
// ([analysis.Options.Timeout], MaxHeap); a cut is the capture's answer
// (kept, and shown as its analysis error), while Delete, or a final
// bundle replacing a preliminary one, stops the capture's analysis and
// keeps nothing.

// errPending is the error of a listed report whose analysis has not
// finished.
var errPending = errors.New("analysis pending")

// errStopped is the error of an analysis stopped because its capture
// is being deleted or replaced (a 404 to a view waiting for it).
var errStopped = fmt.Errorf("%w: it is being deleted or replaced", ErrNotFound)

// maxAnalyses bounds the analyses running at once: each may use a CPU.
var maxAnalyses = max(1, runtime.NumCPU()/2)

// analysisRun is a capture's analysis: not started, running, or
// finished with a report or an error. Its methods are safe for
// concurrent use.
type analysisRun struct {
	mu      sync.Mutex
	done    chan struct{} // closed when the running analysis ends; nil before
	stopped bool          // stop was called: no analysis starts again
	cancel  context.CancelFunc
	// wanted is closed once a request waits for the analysis.
	wanted     chan struct{}
	wantedOnce sync.Once
	// finished is set with rep or err once an analysis completed or was
	// cut by its deadline or budget.
	finished bool
	rep      *analysis.Report
	err      error
}

// startAnalysis starts the capture's analysis unless it is running or
// finished, and returns the channel closed when it ends.
func (c *capture) startAnalysis() <-chan struct{} {
	a := &c.run
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done != nil {
		return a.done
	}
	a.done = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	if a.stopped {
		cancel()
	}
	c.s.running.Add(1)
	go c.analyse(ctx, a.done)
	return a.done
}

// analyse runs the analysis and records its outcome: a report, or an
// error that is the capture's (a failure, a cut) and is kept beside the
// bundle; a stop keeps nothing.
func (c *capture) analyse(ctx context.Context, done chan struct{}) {
	defer c.s.running.Done()
	rep, err := c.runAnalysis(ctx)
	keep := ctx.Err() == nil // else stopped: nothing is the capture's
	a := &c.run
	a.mu.Lock()
	if keep {
		a.finished, a.rep, a.err = true, rep, err
	}
	a.cancel()
	a.mu.Unlock()
	close(done)
}

// runAnalysis waits for a free slot, holds the capture's files (unless
// Delete is removing them) and analyses the bundle.
func (c *capture) runAnalysis(ctx context.Context) (*analysis.Report, error) {
	slot, ok := c.waitSlot(ctx)
	if !ok {
		return nil, errStopped
	}
	defer func() { <-slot }()
	if !c.use.TryRLock() {
		return nil, errStopped // Delete or supersede holds or awaits it
	}
	defer c.use.RUnlock()
	if ctx.Err() != nil {
		return nil, errStopped
	}
	analyses.Add(1)
	rep, err := protect(func() (*analysis.Report, error) {
		return analysis.AnalyzeContext(ctx, c.b, c.s.mem, c.s.opts)
	})
	if ctx.Err() == nil {
		// Kept while the files are held: Delete removes it after.
		c.s.writeReportCache(c, rep, err)
	}
	return rep, err
}

// waitSlot takes a slot of the store's for the analysis: one of slots,
// or, once a request waits for this analysis (wanted), one of asked, so
// that a view is not held behind the listings' analyses of other
// captures. It returns the channel to give the slot back to.
func (c *capture) waitSlot(ctx context.Context) (chan struct{}, bool) {
	select {
	case c.s.slots <- struct{}{}:
		return c.s.slots, true
	case <-c.run.wanted:
	case <-ctx.Done():
		return nil, false
	}
	select {
	case c.s.slots <- struct{}{}:
		return c.s.slots, true
	case c.s.asked <- struct{}{}:
		return c.s.asked, true
	case <-ctx.Done():
		return nil, false
	}
}

// result returns the finished analysis, if there is one.
func (c *capture) result() (rep *analysis.Report, err error, ok bool) {
	a := &c.run
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rep, a.err, a.finished
}

// stopAnalysis stops the capture's analysis for good (Delete, supersede).
func (c *capture) stopAnalysis() {
	a := &c.run
	a.mu.Lock()
	a.stopped = true
	if a.cancel != nil {
		a.cancel()
	}
	a.mu.Unlock()
}

// Report returns the capture's leak report, waiting for its analysis
// (started now if it is not running).
func (c *capture) Report() (*analysis.Report, error) {
	done := c.startAnalysis()
	c.run.wantedOnce.Do(func() { close(c.run.wanted) })
	<-done
	if rep, err, ok := c.result(); ok {
		return rep, err
	}
	return nil, errStopped
}

// ListedReport returns the report the capture list, /metrics and the
// fleet view show, without waiting for an analysis: the finished one, else
// the one kept beside the bundle when it is current; otherwise it starts
// the analysis and returns errPending.
func (c *capture) ListedReport() (*analysis.Report, error) {
	if rep, err, ok := c.result(); ok {
		return rep, err
	}
	ca, _ := c.listed.get(func() (*cachedAnalysis, error) {
		ca, _ := c.s.readReportCache(c)
		return ca, nil // nil when there is none: looked for once
	})
	switch {
	case ca == nil:
		c.startAnalysis()
		return nil, errPending
	case ca.Error != "":
		return nil, errors.New(ca.Error)
	}
	return ca.Report, nil
}

// listWait is how long a listing (the capture list, /metrics, the fleet
// view) waits in all for the analyses it finds pending — an upload's, a
// capture's first after a restart — before showing them as pending: long
// enough for a capture of the usual size, short enough that no listing is
// held by an analysis.
const listWait = time.Second

// uploadWait is how long an upload's answer waits for the analysis of
// the capture it stored, so that the list the uploader asks for next
// shows its suspects; past it the answer goes and the analysis runs on.
var uploadWait = 5 * time.Second

// awaitUpload waits for done at most uploadWait.
func awaitUpload(done <-chan struct{}) {
	t := time.NewTimer(uploadWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// awaitListed starts the analysis of every capture of cs with no report
// ready and waits for them until wait has passed.
func awaitListed(cs []*capture, wait time.Duration) {
	t := time.NewTimer(wait)
	defer t.Stop()
	for _, c := range cs {
		if _, err := c.ListedReport(); !errors.Is(err, errPending) {
			continue
		}
		select {
		case <-c.startAnalysis():
		case <-t.C:
			return
		}
	}
}
