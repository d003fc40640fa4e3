package probe

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/leakscope/leakscope/ingest/schema"
)

// Event is one probe hit in the target process.
type Event struct {
	// Kind is one of schema.EventGoCreate, EventGoExit, EventAlloc,
	// EventGCStart, EventGCEnd.
	Kind string
	// MonoNS is CLOCK_MONOTONIC in nanoseconds (bpf_ktime_get_ns), the
	// same clock as the Go execution trace on Linux.
	MonoNS int64
	// PID is the process id, TID the OS thread id, CPU the processor.
	PID, TID, CPU int
	// Goid is the goroutine concerned: the new one for go_create, the
	// exiting one for go_exit, the allocating one for alloc, the running
	// one for GC events (0 when on a system goroutine with no user g).
	Goid int64
	// ParentGoid is the creator of Goid (go_create, go_exit), else 0.
	ParentGoid int64
	// PC is the creation PC (g.gopc, a return address after the go
	// statement's call) for go_create and go_exit, else 0.
	PC uint64
	// StartPC is the new goroutine's function entry (go_create, go_exit).
	StartPC uint64
	// Size is the allocation size in bytes (alloc), else 0.
	Size int64
	// Addr is the allocated object's address (alloc), else 0.
	Addr uint64
	// Stack is the user stack at the probe, leaf first, when collected:
	// Stack[0] is the exact PC of the probe (for go_create, the RET of
	// newproc1 the probe stands for), the rest return addresses. Pass it
	// to [Symbolizer.Frames].
	Stack []uint64
	// StackErr is the negative errno of bpf_get_stack when stack
	// collection was requested and failed, else 0.
	StackErr int
}

// Kind codes written by the BPF programs.
const (
	kindGoCreate = 1 + iota
	kindGoExit
	kindAlloc
	kindGCStart
	kindGCEnd
	numKinds = kindGCEnd + 1
)

var kindNames = [numKinds]string{
	kindGoCreate: schema.EventGoCreate,
	kindGoExit:   schema.EventGoExit,
	kindAlloc:    schema.EventAlloc,
	kindGCStart:  schema.EventGCStart,
	kindGCEnd:    schema.EventGCEnd,
}

// Record layout shared with programs.go (little endian).
const (
	offKind     = 0  // u32
	offCPU      = 4  // u32
	offKtime    = 8  // u64
	offPidTgid  = 16 // u64: tgid<<32 | tid
	offGoid     = 24 // i64
	offParent   = 32 // i64
	offPC       = 40 // u64
	offStartPC  = 48 // u64
	offSize     = 56 // i64
	offAddr     = 64 // u64
	offCaller   = 72 // u64: return address at SP when the probe fired
	offStackLen = 80 // i64: bpf_get_stack result (bytes, or -errno)
	headerSize  = 88 // stack PCs follow
)

// decodeEvent parses one ring buffer record into ev. Stack is always a
// fresh slice, so callers may keep it.
func decodeEvent(raw []byte, ev *Event) error {
	if len(raw) < headerSize {
		return fmt.Errorf("ebpf record of %d bytes, want at least %d", len(raw), headerSize)
	}
	le := binary.LittleEndian
	k := le.Uint32(raw[offKind:])
	if k == 0 || k >= numKinds {
		return fmt.Errorf("ebpf record with unknown kind %d", k)
	}
	pidTgid := le.Uint64(raw[offPidTgid:])
	*ev = Event{
		Kind:       kindNames[k],
		MonoNS:     int64(le.Uint64(raw[offKtime:])),
		PID:        int(pidTgid >> 32),
		TID:        int(uint32(pidTgid)),
		CPU:        int(le.Uint32(raw[offCPU:])),
		Goid:       int64(le.Uint64(raw[offGoid:])),
		ParentGoid: int64(le.Uint64(raw[offParent:])),
		PC:         le.Uint64(raw[offPC:]),
		StartPC:    le.Uint64(raw[offStartPC:]),
		Size:       int64(le.Uint64(raw[offSize:])),
		Addr:       le.Uint64(raw[offAddr:]),
	}
	n := int64(le.Uint64(raw[offStackLen:]))
	switch {
	case n < 0:
		ev.StackErr = int(n)
	case n > 0:
		n /= 8
		if max := int64(len(raw)-headerSize) / 8; n > max {
			n = max
		}
		ev.Stack = make([]uint64, 0, n+1)
		for i := int64(0); i < n; i++ {
			ev.Stack = append(ev.Stack, le.Uint64(raw[headerSize+8*i:]))
		}
		// At a RET (and at an entry probe on kernels that do not detect
		// function entries) BP is the caller's frame when the probe fires,
		// so the kernel's frame-pointer walk skips the caller. The program
		// saved the return address at SP; put it back unless the kernel
		// already did.
		if c := le.Uint64(raw[offCaller:]); c != 0 && (len(ev.Stack) < 2 || ev.Stack[1] != c) {
			ev.Stack = slices.Insert(ev.Stack, 1, c)
		}
	}
	return nil
}
