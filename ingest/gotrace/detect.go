package gotrace

import (
	"bytes"
	"fmt"
)

// headerLen is the length of a Go execution trace header,
// "go 1.NN trace\x00\x00\x00".
const headerLen = 16

// Looks reports whether head, the first bytes of a file, starts like a Go
// execution trace ("go 1.NN trace" followed by NUL padding), of any version.
// Eight bytes are enough to decide in practice; sixteen make it certain.
func Looks(head []byte) bool {
	_, ok := parseHeader(head)
	return ok
}

// parseHeader returns the minor Go version of a trace header. A header
// shorter than [headerLen] is accepted when what is there matches.
func parseHeader(head []byte) (int, bool) {
	const prefix = "go 1."
	if len(head) > headerLen {
		head = head[:headerLen]
	}
	if len(head) < len(prefix) {
		return 0, false
	}
	if !bytes.HasPrefix(head, []byte(prefix)) {
		return 0, false
	}
	rest := head[len(prefix):]
	v, n := 0, 0
	for n < len(rest) && n < 3 && rest[n] >= '0' && rest[n] <= '9' {
		v = v*10 + int(rest[n]-'0')
		n++
	}
	if n == 0 {
		return 0, false
	}
	tail := rest[n:]
	want := " trace\x00\x00\x00"
	if len(tail) > len(want) {
		return 0, false
	}
	if !bytes.Equal(tail, []byte(want[:len(tail)])) {
		return 0, false
	}
	return v, true
}

// notTraceError describes input that does not start with a trace header.
func notTraceError(head []byte) error {
	return fmt.Errorf("%w: expected the header %q at byte 0, found %q", ErrNotTrace, "go 1.NN trace\\x00\\x00\\x00", head)
}
