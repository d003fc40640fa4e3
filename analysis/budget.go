package analysis

import (
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"time"

	"github.com/leakscope/leakscope/internal/format"
)

// Every analysis runs under a deadline and a heap budget: a bundle shaped
// to make some pass explode costs at most that much, and the caller hears
// that the analysis was cut, and why, instead of waiting.

// DefaultTimeout bounds an analysis when [Options.Timeout] is zero.
const DefaultTimeout = 10 * time.Minute

// DefaultMaxHeap bounds how far the Go heap may grow during an analysis
// when [Options.MaxHeap] is zero.
const DefaultMaxHeap = 4 << 30

// ErrHeapBudget is wrapped by the [CutError] of an analysis whose heap
// grew past its budget.
var ErrHeapBudget = errors.New("heap budget exceeded")

// CutError says that an analysis stopped before its report was complete:
// its context was cancelled (Unwrap gives context.Canceled), it ran past
// its deadline (context.DeadlineExceeded) or its heap grew past its budget
// ([ErrHeapBudget]). No partial report is returned.
type CutError struct {
	// Stage is the pipeline stage that was due to run or running (load,
	// evidence, verdicts, assembly).
	Stage string
	// Why is the cause, in words, with the limit that was reached.
	Why string
	Err error
}

func (e *CutError) Error() string {
	return fmt.Sprintf("analysis cut short in its %s stage: %s", e.Stage, e.Why)
}

func (e *CutError) Unwrap() error { return e.Err }

// budget is the deadline and heap budget of one analysis.
type budget struct {
	ctx     context.Context
	timeout time.Duration
	maxHeap int64
}

// startBudget derives the analysis's context from ctx: cancelled at the
// deadline, or when the live heap has grown by more than maxHeap since
// the start (watched every heapWatchEvery, as of the last GC). stop
// releases the watch.
func startBudget(ctx context.Context, timeout time.Duration, maxHeap int64) (*budget, func()) {
	bg := &budget{timeout: timeout, maxHeap: maxHeap}
	var cancelTimeout context.CancelFunc = func() {}
	if timeout > 0 {
		ctx, cancelTimeout = context.WithTimeout(ctx, timeout)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	bg.ctx = ctx
	done := make(chan struct{})
	if maxHeap > 0 {
		go watchHeap(done, cancel, maxHeap)
	}
	return bg, func() { close(done); cancel(nil); cancelTimeout() }
}

// heapWatchEvery is how often the heap budget is checked.
const heapWatchEvery = 20 * time.Millisecond

// watchHeap cancels with ErrHeapBudget once the live heap is more than
// limit above what it was at the start.
func watchHeap(done <-chan struct{}, cancel context.CancelCauseFunc, limit int64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	base := int64(s[0].Value.Uint64())
	t := time.NewTicker(heapWatchEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		metrics.Read(s)
		if int64(s[0].Value.Uint64())-base > limit {
			cancel(ErrHeapBudget)
			return
		}
	}
}

// check returns a *CutError when the analysis must stop before stage
// (or while in it).
func (bg *budget) check(stage string) error {
	if bg.ctx.Err() == nil {
		return nil
	}
	err := context.Cause(bg.ctx)
	why := "it was interrupted"
	switch {
	case errors.Is(err, ErrHeapBudget):
		why = fmt.Sprintf("its heap grew past its budget of %s", format.Bytes(float64(bg.maxHeap)))
	case errors.Is(err, context.DeadlineExceeded):
		why = "it ran past its deadline"
		if bg.timeout > 0 {
			why += " of " + bg.timeout.String()
		}
	}
	return &CutError{Stage: stage, Why: why, Err: err}
}
