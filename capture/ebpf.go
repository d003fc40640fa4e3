package capture

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leakscope/leakscope/capture/probe"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// tracer is what the eBPF source needs of a [probe.Tracer]; tracerAdapter
// (ebpf_probe.go) binds it.
type tracer interface {
	// Run delivers events to fn until ctx ends or reading fails.
	Run(ctx context.Context, fn func(probe.Event)) error
	// Dropped is the number of events lost so far (ring buffer full).
	Dropped() int64
	// Settings describes the probes for the manifest.
	Settings() map[string]string
	// Frames symbolises a user stack (leaf first, first PC exact).
	Frames(pcs []uint64) []bundle.StackFrame
	// Frame symbolises one PC (retAddr: pc is a return address).
	Frame(pc uint64, retAddr bool) (bundle.StackFrame, bool)
	// SetAttached attaches or detaches a probe group.
	SetAttached(group string, on bool) error
	Close() error
}

// attachTracer attaches the eBPF tracer to pid; tests may replace it.
var attachTracer = attachProbe

// maxStackCache bounds the PC-stack to stack-id cache.
const maxStackCache = 1 << 20

// ebpfSource streams tracer events into ebpf_events.
type ebpfSource struct {
	c      *capturer
	t      tracer
	cancel context.CancelFunc
	done   chan struct{}
	runErr error

	events atomic.Int64
	mu     sync.Mutex
	byKind map[string]int64
	stacks map[string]int64
	keyBuf []byte

	// The goroutine probes' budget (ebpfbudget.go); budgetLoop alone uses
	// the first four, winMu guards the rest.
	budgetDone  chan struct{}
	lastHits    int64
	lastCPU     time.Duration
	windowed    bool // the probes were detached for part of an interval
	winMu       sync.Mutex
	share       float64 // latest estimate of their cost while attached
	windowStart int64   // monotonic start of the open window, 0 when detached
	windows     int64   // windows recorded
	attachedNS  int64   // their total length
	setErr      bool
}

// startEBPF attaches the tracer unless disabled; when it cannot, it says so
// once and records why in the manifest.
func (c *capturer) startEBPF(ctx context.Context) {
	if c.opts.NoEBPF {
		c.log.Notef("eBPF disabled (--no-ebpf); recording pprof and trace only")
		return
	}
	unavailable := func(why string) {
		c.log.Notef("eBPF unavailable: %s; carrying on with pprof and trace", why)
		c.w.Update(func(m *bundle.Manifest) {
			s := m.Source(bundle.SourceEBPF)
			s.Status, s.Detail = bundle.StatusUnavailable, why
		})
	}
	if c.opts.PID == 0 {
		unavailable("no --pid given (eBPF probes the target process by pid)")
		return
	}
	attachStart := monoNow()
	t, err := attachTracer(c.opts.PID)
	if err != nil {
		why := err.Error()
		switch {
		case errors.Is(err, probe.ErrPermission) && !strings.Contains(why, "not permitted"):
			why = "not permitted (needs root, or CAP_BPF and CAP_PERFMON): " + why
		case errors.Is(err, probe.ErrNotSupported) && !strings.Contains(why, "not supported"):
			why = "not supported here: " + why
		}
		unavailable(why)
		return
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e := &ebpfSource{c: c, t: t, cancel: cancel, done: make(chan struct{}),
		byKind: map[string]int64{}, stacks: map[string]int64{},
		budgetDone: make(chan struct{}), windowStart: attachStart}
	c.ebpf = e
	c.w.Update(func(m *bundle.Manifest) {
		s := m.Source(bundle.SourceEBPF)
		s.Settings = t.Settings()
		s.Settings["goroutine_budget"] = budgetSettings(c.opts.EBPFBudget)
		// Interval starts are counted from the capture's start, which
		// the probe_windows rows date on CLOCK_MONOTONIC too.
		s.Settings["goroutine_intervals_from_mono_ns"] = strconv.FormatInt(monoNow()-time.Since(c.start).Nanoseconds(), 10)
	})
	go func() {
		defer close(e.done)
		e.runErr = t.Run(rctx, e.event)
	}()
	go func() {
		defer close(e.budgetDone)
		e.budgetLoop(rctx)
	}()
	// The run context ends the tracer too, after the HTTP sources finish.
	go func() {
		select {
		case <-ctx.Done():
		case <-e.done:
			if e.runErr != nil && rctx.Err() == nil {
				c.log.Notef("eBPF events stopped: %v", e.runErr)
			}
		}
	}()
}

// event turns one probe event into an ebpf_events row. Run calls it from
// one goroutine.
func (e *ebpfSource) event(ev probe.Event) {
	row := schema.EBPFEvent{
		TS:         e.c.clock.wall(ev.MonoNS),
		MonoNS:     ev.MonoNS,
		Kind:       ev.Kind,
		PID:        int64(ev.PID),
		TID:        int64(ev.TID),
		Goid:       ev.Goid,
		ParentGoid: ev.ParentGoid,
		PC:         ev.PC,
		Size:       ev.Size,
	}
	row.StackID = e.stackID(ev)
	e.c.w.Append(row)
	e.events.Add(1)
	e.mu.Lock()
	e.byKind[ev.Kind]++
	e.mu.Unlock()
}

// stackID interns the event's stack: its user stack when collected, else
// for goroutine events the creation site (gopc), as on g0 the stack says
// nothing about the goroutine.
func (e *ebpfSource) stackID(ev probe.Event) int64 {
	pcs := ev.Stack
	retAddr := false
	if len(pcs) == 0 {
		if ev.PC == 0 {
			return 0
		}
		pcs = []uint64{ev.PC}
		retAddr = true
	}
	e.mu.Lock()
	key := e.keyBuf[:0]
	if retAddr {
		key = append(key, 1)
	}
	for _, pc := range pcs {
		key = binary.LittleEndian.AppendUint64(key, pc)
	}
	e.keyBuf = key
	if id, ok := e.stacks[string(key)]; ok {
		e.mu.Unlock()
		return id
	}
	e.mu.Unlock()
	var frames []bundle.StackFrame
	if retAddr {
		f, ok := e.t.Frame(pcs[0], true)
		if !ok {
			f = bundle.StackFrame{Function: "?"}
		}
		frames = []bundle.StackFrame{f}
	} else {
		frames = e.t.Frames(pcs)
	}
	id, err := e.c.w.StackID(frames)
	if err != nil {
		return 0
	}
	e.mu.Lock()
	if len(e.stacks) < maxStackCache {
		e.stacks[string(key)] = id
	}
	e.mu.Unlock()
	return id
}

// stats returns the counts so far.
func (e *ebpfSource) stats() EBPFStats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return EBPFStats{Events: e.events.Load(), Dropped: e.t.Dropped(), ByKind: maps.Clone(e.byKind)}
}

// close stops the event stream, records the goroutine probes' last window
// and detaches the probes.
func (e *ebpfSource) close() {
	e.cancel()
	<-e.budgetDone
	<-e.done
	e.winMu.Lock()
	e.endWindow(true)
	e.winMu.Unlock()
	e.t.Close()
}

// finish records the eBPF source's status and counters.
func (e *ebpfSource) finish(m *bundle.Manifest, gone string) {
	st := e.stats()
	s := m.Source(bundle.SourceEBPF)
	s.Counters = map[string]int64{"events": st.Events, "dropped": st.Dropped}
	e.winMu.Lock()
	s.Counters["goroutine_probe_windows"] = e.windows
	s.Counters["goroutine_probes_attached_ms"] = e.attachedNS / 1e6
	s.Counters["goroutine_probe_cost_ppm"] = int64(e.share * 1e6)
	e.winMu.Unlock()
	for k, n := range st.ByKind {
		s.Counters[k] = n
	}
	switch {
	case e.runErr != nil && !errors.Is(e.runErr, context.Canceled):
		s.Status = bundle.StatusTruncated
		s.Detail = fmt.Sprintf("event stream failed: %v", e.runErr)
	case gone != "":
		s.Status = bundle.StatusTruncated
		s.Detail = "capture ended early: " + gone
	default:
		s.Status = bundle.StatusComplete
	}
	if st.Dropped > 0 {
		s.Detail = strings.TrimPrefix(s.Detail+"; ", "; ") + fmt.Sprintf("%d events dropped (ring buffer full)", st.Dropped)
	}
}
