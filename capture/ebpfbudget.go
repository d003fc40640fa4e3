package capture

import (
	"context"
	"fmt"
	"time"

	"github.com/leakscope/leakscope/capture/probe"
	"github.com/leakscope/leakscope/ingest/schema"
)

// DefaultEBPFBudget is the share of the target's CPU the eBPF goroutine
// probes may cost it. Above it they are attached for part of each
// interval only.
const DefaultEBPFBudget = 0.01

// probeHitCost is what one go_create or go_exit probe hit is taken to cost
// the traced process: BenchmarkOverhead measured 3.4 µs per hit on the
// worst-case service (2 cores, Linux 6.18; the uprobe trap and BPF program
// in a busy multi-threaded process, and the cache they disturb), where
// BenchmarkProbeOverhead's tight loop measures 0.8 µs.
const probeHitCost = 4 * time.Microsecond

// probeWindow is the goroutine probes' part of one interval.
type probeWindow struct {
	length time.Duration // attached for, from attaching; the interval: throughout
	share  float64       // estimated cost while attached, of the target's CPU
}

// probeFloor is the probes' cost always allowed, in CPU time per second:
// a target that uses little CPU may still create goroutines at some rate,
// and 2 ms a second is nothing to the node however small its share of
// the target's CPU.
const probeFloor = 2 * time.Millisecond

// windowFor sizes the goroutine probes' window of one interval from what
// its first measure saw: hits probe hits while the target used cpu. The
// probes may cost budget of the target's CPU, or probeFloor a second when
// that is more; the window is as long as keeps them within it, at least
// measure, and the whole interval when that fits.
func windowFor(interval, measure time.Duration, budget float64, hits int64, cpu time.Duration) probeWindow {
	w := probeWindow{length: interval}
	cost := float64(hits) * float64(probeHitCost)
	w.share = cost / float64(max(cpu, 10*time.Millisecond)) // one clock tick of /proc/PID/stat
	allowed := max(budget*float64(cpu), float64(probeFloor)*measure.Seconds())
	if budget >= 1 || cost <= allowed {
		return w
	}
	w.length = max(measure, time.Duration(float64(interval)*allowed/cost).Truncate(100*time.Millisecond))
	return w
}

// budgetLoop keeps the goroutine probes within the budget: each time they
// are attached (when the tracer starts, then at each interval start) it
// measures their hits and the target's CPU over a second (a tenth of
// shorter intervals), and detaches them until the next interval starts
// when attached throughout they would cost more than the budget. Each
// time they were attached is a probe_windows row. It returns when ctx
// ends, leaving the probes as they are.
func (e *ebpfSource) budgetLoop(ctx context.Context) {
	interval := e.c.opts.Interval
	measure := max(100*time.Millisecond, min(time.Second, interval/10))
	next := e.c.start.Add(interval)
	for {
		from := time.Now()
		if _, _, ok := e.sample(); !ok {
			return
		}
		if !sleepUntil(ctx, from.Add(measure)) {
			return
		}
		hits, cpu, ok := e.sample()
		if !ok {
			return
		}
		w := windowFor(interval, measure, e.c.opts.EBPFBudget, hits, cpu)
		e.noteWindow(w, interval)
		for !next.After(time.Now()) {
			next = next.Add(interval) // an interval start already passed
		}
		if end, ok := detachAt(from, w, interval, next); ok {
			if !sleepUntil(ctx, end) {
				return
			}
			e.setGoroutineProbes(false)
		}
		if !sleepUntil(ctx, next) {
			return
		}
		e.setGoroutineProbes(true)
		next = next.Add(interval)
	}
}

// detachAt says when the goroutine probes are detached in the interval
// whose window w was measured from from, and whether they are: only a
// window shorter than the interval ends, and only before the next
// interval starts at next. A window of the whole interval never ends,
// whenever the loop measured it (attaching the tracer on a loaded machine
// can take longer than an interval, so from may lie well after the
// interval's start).
func detachAt(from time.Time, w probeWindow, interval time.Duration, next time.Time) (time.Time, bool) {
	end := from.Add(w.length)
	return end, w.length < interval && end.Before(next)
}

// sample returns the goroutine probe hits and the target's CPU time since
// the previous call; ok is false when the target's CPU time cannot be read
// (it exited).
func (e *ebpfSource) sample() (hits int64, cpu time.Duration, ok bool) {
	now, err := processCPU(e.c.opts.PID)
	if err != nil {
		return 0, 0, false
	}
	h := e.goroutineHits()
	hits, cpu = h-e.lastHits, now-e.lastCPU
	e.lastHits, e.lastCPU = h, now
	return hits, cpu, true
}

// goroutineHits counts the go_create and go_exit events so far, delivered
// or dropped.
func (e *ebpfSource) goroutineHits() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.byKind[schema.EventGoCreate] + e.byKind[schema.EventGoExit] + e.t.Dropped()
}

// noteWindow says, once, when the goroutine probes start to be detached
// for part of each interval.
func (e *ebpfSource) noteWindow(w probeWindow, interval time.Duration) {
	if w.length < interval && !e.windowed {
		e.windowed = true
		e.c.log.Notef("eBPF goroutine probes would cost the target ~%.0f%% of its CPU; attaching them %v of every %v (--ebpf-budget %.3g%%)",
			100*w.share, w.length, interval, 100*e.c.opts.EBPFBudget)
	}
	e.winMu.Lock()
	e.share = w.share
	e.winMu.Unlock()
}

// setGoroutineProbes attaches or detaches the goroutine probes and records
// the window that a detach ends. Its start is taken before attaching and
// its end after detaching, so every event of the probes lies in a window.
func (e *ebpfSource) setGoroutineProbes(on bool) {
	e.winMu.Lock()
	defer e.winMu.Unlock()
	if on == (e.windowStart != 0) {
		return
	}
	if on {
		e.windowStart = monoNow()
	}
	if err := e.t.SetAttached(probe.GroupGoroutines, on); err != nil {
		if !e.setErr {
			e.setErr = true
			e.c.log.Notef("eBPF goroutine probes: %v", err)
		}
		if on {
			e.windowStart = 0
			return
		}
	}
	if !on {
		e.endWindow(false)
	}
}

// endWindow records the open window as ending now; toEnd says the probes
// stayed attached until the capture ended. e.winMu is held.
func (e *ebpfSource) endWindow(toEnd bool) {
	if e.windowStart == 0 {
		return
	}
	end := monoNow()
	e.c.w.Append(schema.ProbeWindow{Probes: schema.ProbesGoroutines,
		StartTS: e.c.clock.wall(e.windowStart), EndTS: e.c.clock.wall(end),
		StartMono: e.windowStart, EndMono: end, ToEnd: toEnd})
	e.windows++
	e.attachedNS += end - e.windowStart
	e.windowStart = 0
}

// sleepUntil waits until t or ctx ends; it reports whether t came.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// budgetSettings describes the budget for the manifest.
func budgetSettings(budget float64) string {
	if budget >= 1 {
		return "none: goroutine probes attached throughout"
	}
	return fmt.Sprintf("%.3g%% of the target's CPU at %v per goroutine probe hit; above it the goroutine probes are attached for part of each interval (probe_windows)", 100*budget, probeHitCost)
}
