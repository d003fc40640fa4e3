package probe

import "errors"

// ErrNotSupported is wrapped by errors returned when eBPF capture cannot run
// here: wrong OS or architecture, a kernel without the needed features, or a
// target built with an unsupported Go version. Capture carries on without
// eBPF events.
var ErrNotSupported = errors.New("ebpf capture not supported")

// ErrPermission is wrapped by errors returned when the caller lacks the
// privileges to load BPF programs (root, or CAP_BPF plus CAP_PERFMON).
// Capture carries on without eBPF events.
var ErrPermission = errors.New("ebpf capture not permitted")
