package capture

import (
	"context"
	"fmt"
	"strings"

	"github.com/leakscope/leakscope/capture/probe"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/internal/format"
)

// ebpfRingBufferBytes is the ring buffer size asked of the tracer.
const ebpfRingBufferBytes = 8 << 20

// probeTracer adapts a [probe.Tracer] to the tracer interface.
type probeTracer struct {
	t   *probe.Tracer
	sym *probe.Symbolizer
}

// attachProbe attaches capture/probe's tracer to pid with every probe.
// A panic in the tracer becomes an error: the capture goes on without eBPF.
func attachProbe(pid int) (tr tracer, err error) {
	defer func() {
		if r := recover(); r != nil {
			tr, err = nil, fmt.Errorf("ebpf tracer failed: %v", r)
		}
	}()
	t, err := probe.Attach(pid, probe.Options{RingBufferBytes: ebpfRingBufferBytes})
	if err != nil {
		return nil, err
	}
	return &probeTracer{t: t, sym: t.Symbolizer()}, nil
}

func (p *probeTracer) Run(ctx context.Context, fn func(probe.Event)) error { return p.t.Run(ctx, fn) }

func (p *probeTracer) Dropped() int64 {
	var n int64
	for _, d := range p.t.Stats().Drops {
		n += d
	}
	return n
}

func (p *probeTracer) Settings() map[string]string {
	info := p.t.Info()
	var probes []string
	for _, pi := range info.Probes {
		probes = append(probes, fmt.Sprintf("%s@%s+%#x", pi.Kind, pi.Symbol, pi.Offset))
	}
	s := map[string]string{
		"probes":          strings.Join(probes, ","),
		"alloc_sampling":  "the target's runtime.MemProfileRate (runtime.profilealloc hits)",
		"ring_buffer":     format.Bytes(float64(ebpfRingBufferBytes)),
		"go_version":      info.GoVersion,
		"offsets_source":  info.Offsets.Source,
		"clock":           "bpf_ktime_get_ns (CLOCK_MONOTONIC) mapped with clock_sync",
		"creation_stack":  "gopc (creation site) only",
		"delivery":        "polled every 50 ms; the reader is woken early only past a quarter-full ring buffer",
		"stripped_binary": fmt.Sprint(info.Stripped),
		"position_indep":  fmt.Sprint(info.PIE),
	}
	if len(info.Notes) > 0 {
		s["notes"] = strings.Join(info.Notes, "; ")
	}
	return s
}

func (p *probeTracer) Frames(pcs []uint64) []bundle.StackFrame { return p.sym.Frames(pcs) }

func (p *probeTracer) Frame(pc uint64, retAddr bool) (bundle.StackFrame, bool) {
	return p.sym.Frame(pc, retAddr)
}

func (p *probeTracer) SetAttached(group string, on bool) error { return p.t.SetAttached(group, on) }

func (p *probeTracer) Close() error { return p.t.Close() }
