//go:build linux

package probe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

// Tracer holds the probes attached to one process. Run delivers its
// events; Stats, Info and Symbolizer may be called concurrently with Run.
type Tracer struct {
	pid    int
	bin    *Binary
	info   BinaryInfo
	sym    *Symbolizer
	events *ebpf.Map
	drops  *ebpf.Map
	progs  []*ebpf.Program
	ex     *link.Executable
	// groups holds each probe group's uprobes; groupMu guards their links,
	// which SetAttached closes and re-creates.
	groups  map[string]*probeGroup
	groupMu sync.Mutex
	rd      *ringbuf.Reader
	bias    uint64            // PIE load bias, 0 when unknown
	leaf    map[uint64]uint64 // in-frame return site PC -> its RET's PC
	wakeAt  int               // see progConfig.wakeAt

	counts     [numKinds]atomic.Int64
	stackErrs  atomic.Int64
	decodeErrs atomic.Int64
	closeOnce  sync.Once
	closeErr   error
	closed     atomic.Pointer[Stats] // final counters, set by Close
	runMu      sync.Mutex
}

// probeSpec says where one program goes.
type probeSpec struct {
	group  string // GroupGoroutines, GroupAlloc or GroupGC
	kind   uint32
	symbol string
	ret    bool // at every RET, else after the prologue
	body   body
	stack  bool
}

// Attach loads the BPF programs and attaches them to process pid, which
// must run a linux/amd64 Go binary: one of the tested releases
// ([MinGoVersion] to [MaxGoVersion]), or another whose DWARF gives the
// offsets (with a warning in [BinaryInfo.Notes]). Errors wrap
// ErrNotSupported (architecture, kernel, a release it cannot read) or
// ErrPermission (not root, no CAP_BPF/CAP_PERFMON); capture can carry on
// without eBPF in both cases.
func Attach(pid int, opts Options) (_ *Tracer, err error) {
	if runtime.GOARCH != "amd64" {
		return nil, fmt.Errorf("ebpf probes need linux/amd64, this is %s/%s: %w", runtime.GOOS, runtime.GOARCH, ErrNotSupported)
	}
	opts = opts.withDefaults()
	exe := fmt.Sprintf("/proc/%d/exe", pid)
	bin, err := OpenBinary(exe)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return nil, classify(fmt.Sprintf("attach to pid %d", pid), err)
		}
		return nil, fmt.Errorf("attach to pid %d: %w", pid, err)
	}
	t := &Tracer{pid: pid, bin: bin, info: bin.Info()}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	if bias, err := LoadBias(pid, bin); err != nil {
		t.info.Notes = append(t.info.Notes, fmt.Sprintf("symbolisation may be wrong: %v", err))
		t.sym = NewSymbolizer(bin, 0)
	} else {
		t.bias = bias
		t.sym = NewSymbolizer(bin, bias)
	}
	t.wakeAt = opts.RingBufferBytes / wakeFraction
	if err := rlimit.RemoveMemlock(); err != nil {
		return nil, classify("raise memlock limit", err)
	}
	t.events, err = ebpf.NewMap(&ebpf.MapSpec{Name: "ls_events", Type: ebpf.RingBuf, MaxEntries: uint32(opts.RingBufferBytes)})
	if err != nil {
		return nil, classify("create ring buffer", err)
	}
	t.drops, err = ebpf.NewMap(&ebpf.MapSpec{Name: "ls_drops", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: numKinds})
	if err != nil {
		return nil, classify("create drop counters", err)
	}
	t.ex, err = link.OpenExecutable(exe)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", exe, err)
	}
	t.groups = map[string]*probeGroup{}
	for _, p := range probeSet(opts) {
		if err := t.attach(p, opts); err != nil {
			return nil, err
		}
	}
	t.rd, err = ringbuf.NewReader(t.events)
	if err != nil {
		return nil, classify("open ring buffer reader", err)
	}
	return t, nil
}

// probeSet lists the probes enabled by opts.
func probeSet(opts Options) []probeSpec {
	var ps []probeSpec
	if opts.Goroutines {
		ps = append(ps,
			probeSpec{group: GroupGoroutines, kind: kindGoCreate, symbol: "runtime.newproc1", ret: true, body: goCreateBody, stack: opts.CreateStacks},
			probeSpec{group: GroupGoroutines, kind: kindGoExit, symbol: "runtime.gdestroy", body: goExitBody})
	}
	if opts.Alloc {
		ps = append(ps, probeSpec{group: GroupAlloc, kind: kindAlloc, symbol: "runtime.profilealloc", body: allocBody, stack: true})
	}
	if opts.GC {
		ps = append(ps,
			probeSpec{group: GroupGC, kind: kindGCStart, symbol: "runtime.(*gcControllerState).startCycle", body: gcBody},
			probeSpec{group: GroupGC, kind: kindGCEnd, symbol: "runtime.gcMarkTermination", body: gcBody})
	}
	return ps
}

// probeSite is one uprobe location of a probeSpec.
type probeSite struct {
	off     uint64 // from the function start
	ret     uint64 // the RET an in-frame site stands for
	inFrame bool
}

// attach loads the program of p and puts it on every location of p.
func (t *Tracer) attach(p probeSpec, opts Options) error {
	fn, err := t.bin.Func(p.symbol)
	if err != nil {
		return fmt.Errorf("locate probe: %v: %w", err, ErrNotSupported)
	}
	var sites []probeSite
	if p.ret {
		rs, err := t.bin.retSites(fn)
		if err != nil {
			return fmt.Errorf("locate probe: %w", err)
		}
		for _, r := range rs {
			sites = append(sites, probeSite{off: r.Offset, ret: r.Ret, inFrame: r.Offset != r.Ret})
			if r.Offset == r.Ret {
				t.info.Notes = append(t.info.Notes, fmt.Sprintf("%s: no branch before the RET at +%#x: probe on the RET (slower)", p.symbol, r.Ret))
			}
		}
	} else {
		off, ok, err := t.bin.PrologueEnd(fn)
		if err != nil {
			return fmt.Errorf("locate probe: %w", err)
		}
		if !ok {
			t.info.Notes = append(t.info.Notes, fmt.Sprintf("%s has no stack check: probe at entry", p.symbol))
		}
		sites = []probeSite{{off: off}}
	}
	progs := map[bool]*ebpf.Program{} // by inFrame
	for _, s := range sites {
		prog := progs[s.inFrame]
		if prog == nil {
			cfg := progConfig{events: t.events, drops: t.drops, offsets: t.bin.offsets, wakeAt: t.wakeAt, inFrame: s.inFrame}
			if p.stack {
				cfg.depth = opts.StackDepth
			}
			prog, err = ebpf.NewProgram(buildProgram(p.kind, cfg, p.body))
			if err != nil {
				return classify("load "+kindNames[p.kind]+" program", err)
			}
			progs[s.inFrame] = prog
			t.progs = append(t.progs, prog)
		}
		u := uprobe{prog: prog, symbol: p.symbol, fileOffset: fn.FileOffset, off: s.off}
		if err := t.group(p.group).add(t, u); err != nil {
			return err
		}
		t.info.Probes = append(t.info.Probes, ProbeInfo{Kind: kindNames[p.kind], Symbol: p.symbol, Offset: s.off, FileOffset: fn.FileOffset + s.off})
		if s.inFrame {
			if t.leaf == nil {
				t.leaf = map[uint64]uint64{}
			}
			t.leaf[t.bias+fn.Addr+s.off] = t.bias + fn.Addr + s.ret
		}
	}
	return nil
}

// classify wraps a kernel error with the sentinel that tells capture why
// eBPF is unavailable.
func classify(what string, err error) error {
	switch {
	case errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) || errors.Is(err, os.ErrPermission):
		return fmt.Errorf("%s: %w (need root or CAP_BPF+CAP_PERFMON; capture continues without eBPF): %w", what, ErrPermission, err)
	case errors.Is(err, ebpf.ErrNotSupported):
		return fmt.Errorf("%s: %w (kernel lacks a needed feature, ring buffers need 5.8+; capture continues without eBPF): %w", what, ErrNotSupported, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// The programs write records without waking the reader until the ring
// buffer holds more than 1/wakeFraction of its size; Run polls every
// pollInterval, which bounds how late an event is delivered.
const (
	wakeFraction = 4
	pollInterval = 50 * time.Millisecond
)

// Run reads events and calls fn for each, in ring buffer order (nearly
// time order: the timestamp is taken just after the record is reserved),
// until ctx is done; it then delivers the records already buffered at that
// moment and returns nil. It returns early only on a reader failure or
// Close. Only one Run may be active at a time; fn must not block for long
// or events are dropped (see Stats.Drops). Events arrive in batches, at
// most about pollInterval (50 ms) after they happened while the ring
// buffer is less than a quarter full, at once beyond.
func (t *Tracer) Run(ctx context.Context, fn func(Event)) error {
	t.runMu.Lock()
	defer t.runMu.Unlock()
	// At cancellation, note how much is buffered and wake the reader. The
	// drain is bounded: a traced process that keeps producing (the tracer
	// tracing itself, say) must not keep Run alive.
	var pending atomic.Int64
	pending.Store(-1)
	stop := context.AfterFunc(ctx, func() {
		pending.Store(int64(t.rd.AvailableBytes()))
		t.rd.Flush()
	})
	defer stop()
	var rec ringbuf.Record
	var drained int64
	t.rd.SetDeadline(time.Now().Add(pollInterval))
	for {
		if p := pending.Load(); p >= 0 && drained >= p {
			return nil
		}
		err := t.rd.ReadInto(&rec)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			// Everything written so far has been read: poll again later.
			t.rd.SetDeadline(time.Now().Add(pollInterval))
			continue
		case errors.Is(err, ringbuf.ErrFlushed):
			if ctx.Err() != nil {
				return nil
			}
			continue
		case errors.Is(err, ringbuf.ErrClosed):
			return nil
		case err != nil:
			return fmt.Errorf("read ebpf events: %w", err)
		}
		if pending.Load() >= 0 {
			drained += int64(8 + (len(rec.RawSample)+7)&^7) // record header + aligned data
		}
		var ev Event
		if err := decodeEvent(rec.RawSample, &ev); err != nil {
			t.decodeErrs.Add(1)
			continue
		}
		if len(ev.Stack) > 0 && t.leaf != nil {
			// A return probe placed on a branch before the RET: show
			// the RET, where the function returns, as the leaf.
			if r, ok := t.leaf[ev.Stack[0]]; ok {
				ev.Stack[0] = r
			}
		}
		t.counts[kindCode(ev.Kind)].Add(1)
		if ev.StackErr != 0 {
			t.stackErrs.Add(1)
		}
		fn(ev)
	}
}

// kindCode maps a kind name back to its code.
func kindCode(kind string) int {
	for i, n := range kindNames {
		if n == kind && i > 0 {
			return i
		}
	}
	return 0
}

// Stats returns the current counters; after Close, the final ones.
func (t *Tracer) Stats() Stats {
	if s := t.closed.Load(); s != nil {
		return *s
	}
	s := Stats{Events: map[string]int64{}, Drops: map[string]int64{},
		StackErrors: t.stackErrs.Load(), DecodeErrors: t.decodeErrs.Load()}
	for k := 1; k < numKinds; k++ {
		s.Events[kindNames[k]] = t.counts[k].Load()
		var v uint64
		if t.drops != nil && t.drops.Lookup(uint32(k), &v) == nil {
			s.Drops[kindNames[k]] = int64(v)
		}
	}
	for _, p := range t.progs {
		if st, err := p.Stats(); err == nil {
			s.RecursionMisses += int64(st.RecursionMisses)
		}
	}
	return s
}

// Info describes the binary and the probes attached.
func (t *Tracer) Info() BinaryInfo { return t.info }

// Symbolizer resolves PCs of the traced process.
func (t *Tracer) Symbolizer() *Symbolizer { return t.sym }

// Close detaches the probes and frees the kernel objects. It is safe to
// call more than once and concurrently with Run, which then returns.
func (t *Tracer) Close() error {
	t.closeOnce.Do(func() {
		final := t.Stats()
		t.closed.Store(&final)
		var errs []error
		t.groupMu.Lock()
		for _, g := range t.groups {
			errs = append(errs, g.detach())
		}
		t.groupMu.Unlock()
		if t.rd != nil {
			errs = append(errs, t.rd.Close())
		}
		for _, p := range t.progs {
			errs = append(errs, p.Close())
		}
		if t.events != nil {
			errs = append(errs, t.events.Close())
		}
		// drops stays open until here so Stats works up to Close.
		if t.drops != nil {
			errs = append(errs, t.drops.Close())
		}
		errs = append(errs, t.bin.Close())
		t.closeErr = errors.Join(errs...)
	})
	return t.closeErr
}
