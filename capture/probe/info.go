package probe

import "github.com/leakscope/leakscope/ingest/schema"

// BinaryInfo describes the traced binary and how it was probed, for the
// capture manifest.
type BinaryInfo struct {
	Path      string
	GoVersion string // e.g. "go1.26.8"
	Module    string // main module path
	Stripped  bool   // no .symtab: functions located through the pclntab
	PIE       bool
	Offsets   Offsets // Offsets.Source says "dwarf" or "table:go1.N"
	Probes    []ProbeInfo
	Notes     []string // fallbacks taken, probes skipped, and why
}

// ProbeInfo is one attached uprobe.
type ProbeInfo struct {
	Kind       string // schema.EventGoCreate etc.
	Symbol     string // e.g. "runtime.newproc1"
	Offset     uint64 // from the function start: a RET or the post-prologue point
	FileOffset uint64 // absolute uprobe offset in the executable
}

// Info returns what is known about the binary before any probe is attached.
func (b *Binary) Info() BinaryInfo {
	return BinaryInfo{
		Path: b.path, GoVersion: b.goVersion, Module: b.module,
		Stripped: b.stripped, PIE: b.pie, Offsets: b.offsets, Notes: b.Notes(),
	}
}

// Stats are counters of a [Tracer].
type Stats struct {
	// Events counts decoded events by kind.
	Events map[string]int64
	// Drops counts records lost because the ring buffer was full, by kind.
	Drops map[string]int64
	// StackErrors counts events whose stack could not be taken.
	StackErrors int64
	// DecodeErrors counts malformed ring buffer records (should stay 0).
	DecodeErrors int64
	// RecursionMisses counts probe hits the kernel skipped because another
	// BPF program was running on the CPU.
	RecursionMisses int64
}

// Options select the probes of [Attach]. The zero value enables every
// probe with default sizes.
type Options struct {
	// RingBufferBytes is the ring buffer size, rounded up to a power of
	// two of at least one page. Default 8 MiB.
	RingBufferBytes int
	// Goroutines, Alloc and GC enable the go_create/go_exit, alloc and
	// gc_start/gc_end probes. When all three are false, all are enabled.
	Goroutines, Alloc, GC bool
	// CreateStacks adds the creator's user stack to go_create events
	// (otherwise only gopc locates the go statement). Alloc events always
	// carry a stack.
	CreateStacks bool
	// StackDepth is the number of PCs kept per stack, 1 to 127.
	// Default 32.
	StackDepth int
}

func (o Options) withDefaults() Options {
	if !o.Goroutines && !o.Alloc && !o.GC {
		o.Goroutines, o.Alloc, o.GC = true, true, true
	}
	if o.RingBufferBytes <= 0 {
		o.RingBufferBytes = 8 << 20
	}
	size := 4096
	for size < o.RingBufferBytes && size < 1<<30 {
		size <<= 1
	}
	o.RingBufferBytes = size
	if o.StackDepth <= 0 {
		o.StackDepth = 32
	}
	if o.StackDepth > 127 {
		o.StackDepth = 127
	}
	return o
}

// Probe groups, as [Tracer.SetAttached] names them.
const (
	// GroupGoroutines is the go_create and go_exit probes.
	GroupGoroutines = schema.ProbesGoroutines
	// GroupAlloc is the alloc probe.
	GroupAlloc = "alloc"
	// GroupGC is the gc_start and gc_end probes.
	GroupGC = "gc"
)
