package gotrace

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"golang.org/x/exp/trace"
)

// Clock methods recorded in the manifest (source setting "clock").
const (
	// ClockSnapshot: the trace's own clock snapshots (Go 1.25+), one per
	// generation, map trace time to wall and monotonic time.
	ClockSnapshot = "trace-snapshot"
	// ClockOffset: no snapshot; wall = trace time + Options.WallOffsetNS.
	ClockOffset = "offset"
	// ClockAnchoredEnd: no snapshot and no offset; the trace's last batch
	// is placed at Options.Now (estimated from batch headers).
	ClockAnchoredEnd = "anchored-end"
	// ClockAnchoredStart: as ClockAnchoredEnd, but the input could not be
	// scanned ahead (not seekable), so the first event is placed at
	// Options.Now.
	ClockAnchoredStart = "anchored-start"
)

// clock maps trace timestamps (nanoseconds of the trace clock, which on
// Linux is CLOCK_MONOTONIC) to wall-clock and monotonic nanoseconds.
type clock struct {
	method string
	snap   bool
	trace0 int64 // trace time of the current snapshot
	wall0  int64 // wall time of the current snapshot
	mono0  int64 // CLOCK_MONOTONIC of the current snapshot
	offset int64 // wall - trace time, when there is no snapshot
	set    bool
}

// setSnapshot makes the snapshot the reference for the events that follow.
func (c *clock) setSnapshot(s *trace.ClockSnapshot) {
	c.method = ClockSnapshot
	c.snap = true
	c.trace0 = int64(s.Trace)
	c.wall0 = s.Wall.UnixNano()
	c.mono0 = int64(s.Mono)
	c.set = true
}

// wall returns the wall-clock time of trace time t in Unix nanoseconds.
func (c *clock) wall(t int64) int64 {
	if c.snap {
		return c.wall0 + (t - c.trace0)
	}
	return t + c.offset
}

// mono returns CLOCK_MONOTONIC of trace time t.
func (c *clock) mono(t int64) int64 {
	if c.snap {
		return c.mono0 + (t - c.trace0)
	}
	return t
}

// prescanEnd estimates the trace time (in nanoseconds) of the end of a
// Go 1.22+ trace by reading only batch headers and seeking over batch
// bodies. It returns the latest batch start time; events of the last batch
// of an M may come somewhat later. The reader is left at an unspecified
// offset.
func prescanEnd(rs io.ReadSeeker) (int64, error) {
	if _, err := rs.Seek(headerLen, io.SeekStart); err != nil {
		return 0, err
	}
	br := &byteCounter{r: bufio.NewReaderSize(rs, 64)}
	var pos int64 = headerLen
	var maxTicks uint64
	var nsPerTick float64
	for {
		br.n = 0
		typ, err := br.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
		switch typ {
		case evEndOfGeneration:
			pos++
			continue
		case evEventBatch, evExperimentalBatch:
		default:
			return 0, fmt.Errorf("byte %d: expected a batch, found event type %d", pos, typ)
		}
		if typ == evExperimentalBatch {
			if _, err := br.ReadByte(); err != nil {
				return 0, err
			}
		}
		var hdr [4]uint64 // gen, m, ts, size (varints may be padded)
		for i := range hdr {
			if hdr[i], err = binary.ReadUvarint(br); err != nil {
				return 0, err
			}
		}
		size := int64(hdr[3])
		pos += br.n + size
		if typ == evEventBatch && size > 0 {
			first, err := br.ReadByte()
			if err != nil {
				return 0, err
			}
			if first == evSync {
				// Go 1.25+: the frequency opens a sync batch.
				if first, err = br.ReadByte(); err != nil {
					return 0, err
				}
			}
			if first == evFrequency {
				f, err := binary.ReadUvarint(br)
				if err != nil {
					return 0, err
				}
				if f > 0 {
					nsPerTick = 1e9 / float64(f)
				}
			} else if hdr[2] > maxTicks {
				maxTicks = hdr[2]
			}
		}
		// Seek over the rest of the body (the small buffer is dropped).
		if _, err := rs.Seek(pos, io.SeekStart); err != nil {
			return 0, err
		}
		br.r.Reset(rs)
	}
	if nsPerTick == 0 {
		return 0, errors.New("no frequency event found")
	}
	return int64(float64(maxTicks) * nsPerTick), nil
}

// byteCounter counts the bytes read through it.
type byteCounter struct {
	r *bufio.Reader
	n int64
}

func (b *byteCounter) ReadByte() (byte, error) {
	c, err := b.r.ReadByte()
	if err == nil {
		b.n++
	}
	return c, err
}

// unixNanos returns t as Unix nanoseconds, 0 for the zero time.
func unixNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
