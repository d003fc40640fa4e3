package capture

import (
	"time"

	"golang.org/x/sys/unix"
)

// ClockPair is one (CLOCK_MONOTONIC, wall clock) reading of this node.
type ClockPair struct {
	MonoNS int64
	WallNS int64
	// UncertaintyNS is the width of the monotonic bracket around the wall
	// read.
	UncertaintyNS int64
}

// OffsetNS is wall minus monotonic: add it to a CLOCK_MONOTONIC timestamp
// to get Unix nanoseconds.
func (p ClockPair) OffsetNS() int64 { return p.WallNS - p.MonoNS }

// monoNow reads CLOCK_MONOTONIC (the clock of bpf_ktime_get_ns and of the
// Go trace on Linux).
func monoNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		// CLOCK_MONOTONIC exists on every Linux; keep going with zero.
		return 0
	}
	return ts.Nano()
}

// TakeClockPair reads the wall clock bracketed by two CLOCK_MONOTONIC
// reads, a few times, and keeps the tightest bracket.
func TakeClockPair() ClockPair {
	best := ClockPair{UncertaintyNS: -1}
	for i := 0; i < 5; i++ {
		m1 := monoNow()
		w := time.Now().UnixNano()
		m2 := monoNow()
		if gap := m2 - m1; best.UncertaintyNS < 0 || gap < best.UncertaintyNS {
			best = ClockPair{MonoNS: m1 + gap/2, WallNS: w, UncertaintyNS: gap}
		}
	}
	return best
}
