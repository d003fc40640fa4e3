//go:build !linux

package probe

import (
	"context"
	"fmt"
	"runtime"
)

// Tracer holds the probes attached to one process. eBPF needs Linux, so
// on this platform Attach always fails and no Tracer exists.
type Tracer struct{}

// Attach returns an error wrapping ErrNotSupported: eBPF needs Linux.
func Attach(pid int, opts Options) (*Tracer, error) {
	return nil, fmt.Errorf("ebpf probes need linux/amd64, this is %s/%s (capture continues without eBPF): %w", runtime.GOOS, runtime.GOARCH, ErrNotSupported)
}

// Run returns an error wrapping ErrNotSupported.
func (t *Tracer) Run(ctx context.Context, fn func(Event)) error {
	return fmt.Errorf("run tracer: %w", ErrNotSupported)
}

// Stats returns zero counters.
func (t *Tracer) Stats() Stats { return Stats{} }

// Info returns an empty BinaryInfo.
func (t *Tracer) Info() BinaryInfo { return BinaryInfo{} }

// Symbolizer returns nil.
func (t *Tracer) Symbolizer() *Symbolizer { return nil }

// Close does nothing.
func (t *Tracer) Close() error { return nil }

// SetAttached returns an error wrapping ErrNotSupported.
func (t *Tracer) SetAttached(group string, on bool) error {
	return fmt.Errorf("set probes: %w", ErrNotSupported)
}

// Attached reports false.
func (t *Tracer) Attached(group string) bool { return false }
