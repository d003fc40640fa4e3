package dump

import (
	"errors"
	"fmt"
)

// Goroutine is one goroutine block of a dump. The slices it holds belong to
// the [Reader] that returned it and are reused by the next call to
// [Reader.Next]; use [Goroutine.Clone] to keep one. Strings may be kept.
type Goroutine struct {
	// ID is the goroutine id. Crash tracebacks also print "goroutine 0"
	// blocks: the stacks of Ms (g0 or the signal stack), not goroutines.
	ID int64
	// State is the status the runtime printed ("chan send", "select (no
	// cases)", "running", "IO wait", "chan receive (durable)" ...), without
	// the transient " (scan)" mark.
	State string
	// WaitMinutes is the "N minutes" the goroutine has been blocked (the
	// runtime prints it from one minute on; 0 otherwise).
	WaitMinutes int64
	// LockedToThread is set by "locked to thread" (runtime.LockOSThread).
	LockedToThread bool
	// Bubble is the synctest bubble id ("synctest bubble N"), 0 if none.
	Bubble int64
	// Frames are the printed frames, leaf first.
	Frames []Frame
	// CreatedBy is the "created by" frame, nil for goroutine 1, for
	// runtime-internal creators the runtime hides, and when cut off.
	CreatedBy *Frame
	// CreatorGoid is the creating goroutine ("created by f in goroutine
	// N", Go 1.21+); 0 when the dump does not say.
	CreatorGoid int64
	// Labels are the pprof labels printed in the header (Go 1.26 with
	// GODEBUG=tracebacklabels=1), as "k=v,k2=v2" sorted by key, or "".
	Labels string
	// FramesElided is set when the runtime left frames out of a deep stack.
	FramesElided bool
	// ElidedFrames is how many frames were left out when the runtime says
	// so ("...N frames elided...", Go 1.21+); 0 for "...additional frames
	// elided..." (older runtimes, count unknown).
	ElidedFrames int
	// StackUnavailable is set by "goroutine running on other thread; stack
	// unavailable" (a crash while the goroutine ran on another M).
	StackUnavailable bool
	// Ancestors is the number of "[originating from goroutine N]:"
	// sections (GODEBUG=tracebackancestors=N); their frames are checked but
	// not kept.
	Ancestors int
	// Line is the 1-based line number of the goroutine's header.
	Line int

	createdBy Frame
}

// Frame is one frame of a goroutine's stack.
type Frame struct {
	Function string
	File     string
	Line     int64
	// Inlined is set for a frame the compiler inlined: the runtime prints
	// its arguments as "..." and no "+0x" offset.
	Inlined bool
	// Args is the text the runtime printed between the frame's
	// parentheses: argument words ("0xc000012340, 0x1"), with "?" after
	// words it is unsure of, "{...}" around aggregates, "..." for an
	// inlined frame; "" for none.
	Args string
}

// Clone returns a deep copy of g that stays valid after the next
// [Reader.Next].
func (g *Goroutine) Clone() *Goroutine {
	c := *g
	c.Frames = append([]Frame(nil), g.Frames...)
	if g.CreatedBy != nil {
		c.CreatedBy = &c.createdBy
	}
	return &c
}

func (g *Goroutine) reset(id int64, line int) {
	frames := g.Frames[:0]
	*g = Goroutine{ID: id, Line: line, Frames: frames}
}

// ErrNoGoroutines is wrapped by the error returned for input that holds no
// goroutine block and no race report at all.
var ErrNoGoroutines = errors.New("no goroutine found")

// NoGoroutinesError is the error for input that holds no goroutine block
// and no race report; it wraps [ErrNoGoroutines].
type NoGoroutinesError struct {
	Lines int    // lines read
	Cut   string // where the only block was cut off, if it was
	Notes string // what [Reader.Notes] says
}

func (e *NoGoroutinesError) Error() string {
	if e.Cut != "" {
		return fmt.Sprintf("%v: the only goroutine block is %s", ErrNoGoroutines, e.Cut)
	}
	msg := fmt.Sprintf("%v in %d lines (not a goroutine dump, crash traceback or race report)", ErrNoGoroutines, e.Lines)
	if e.Notes != "" {
		msg += ": " + e.Notes
	}
	return msg
}

func (e *NoGoroutinesError) Unwrap() error { return ErrNoGoroutines }
