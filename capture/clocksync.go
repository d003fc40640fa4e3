package capture

import (
	"sync"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// ClockSyncSource is the clock_sync source name of the pairs capture takes.
const ClockSyncSource = "capture"

// clockSync takes (CLOCK_MONOTONIC, wall) pairs, writes them to the
// clock_sync table and maps monotonic timestamps with the latest one. It is
// safe for concurrent use.
type clockSync struct {
	w     *bundle.Writer
	mu    sync.Mutex
	first ClockPair
	last  ClockPair
	n     int
}

// take records a new pair and returns it.
func (cs *clockSync) take() ClockPair {
	p := TakeClockPair()
	cs.mu.Lock()
	if cs.n == 0 {
		cs.first = p
	}
	cs.last = p
	cs.n++
	cs.mu.Unlock()
	cs.w.Append(schema.ClockSync{MonoNS: p.MonoNS, TS: p.WallNS, Source: ClockSyncSource})
	return p
}

// offset is wall minus monotonic from the latest pair.
func (cs *clockSync) offset() int64 {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.last.OffsetNS()
}

// wall maps a CLOCK_MONOTONIC timestamp to Unix nanoseconds.
func (cs *clockSync) wall(mono int64) int64 { return mono + cs.offset() }

// drift is the change of the offset between the first and latest pair.
func (cs *clockSync) drift() (int64, int) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.last.OffsetNS() - cs.first.OffsetNS(), cs.n
}
