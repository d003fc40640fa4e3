package gotrace

import (
	"fmt"

	"golang.org/x/exp/trace"
)

// recKind says what a decoded record describes.
type recKind uint8

const (
	recSync recKind = iota + 1
	recTaskBegin
	recTaskEnd
	recRegionBegin
	recRegionEnd
	recLog
	recMetric
	recRangeBegin
	recRangeEnd
)

// rec is one of the rarer events (not a goroutine state change) reduced
// to what ingest keeps.
type rec struct {
	kind    recKind
	hasSnap bool
	ts      int64
	g       int64 // goroutine the record is about
	id      uint64
	parent  uint64
	str     string // name, category or range name
	msg     string
	val     uint64
	snap    *trace.ClockSnapshot
}

// decode fills r from ev and reports whether the event is kept.
func decode(ev *trace.Event, r *rec) bool {
	*r = rec{ts: int64(ev.Time()), g: int64(ev.Goroutine())}
	switch ev.Kind() {
	case trace.EventTaskBegin, trace.EventTaskEnd:
		t := ev.Task()
		r.kind = recTaskBegin
		if ev.Kind() == trace.EventTaskEnd {
			r.kind = recTaskEnd
		}
		r.id, r.parent, r.str = uint64(t.ID), uint64(t.Parent), t.Type
	case trace.EventRegionBegin, trace.EventRegionEnd:
		rg := ev.Region()
		r.kind = recRegionBegin
		if ev.Kind() == trace.EventRegionEnd {
			r.kind = recRegionEnd
		}
		r.id, r.str = uint64(rg.Task), rg.Type
	case trace.EventLog:
		l := ev.Log()
		r.kind = recLog
		r.id, r.str, r.msg = uint64(l.Task), l.Category, l.Message
	case trace.EventMetric:
		m := ev.Metric()
		if m.Value.Kind() != trace.ValueUint64 {
			return false
		}
		r.kind = recMetric
		r.str = m.Name
		r.val = m.Value.Uint64()
	case trace.EventRangeBegin, trace.EventRangeEnd:
		rg := ev.Range()
		r.kind = recRangeBegin
		if ev.Kind() == trace.EventRangeEnd {
			r.kind = recRangeEnd
		}
		r.str = rg.Name
		r.g = 0
		if rg.Scope.Kind == trace.ResourceGoroutine {
			r.g = int64(rg.Scope.Goroutine())
		}
	case trace.EventSync:
		s := ev.Sync()
		r.kind = recSync
		r.val = uint64(s.N)
		if s.ClockSnapshot != nil {
			r.snap = s.ClockSnapshot
			r.hasSnap = true
		}
	default:
		return false
	}
	return true
}

// goStateNames are the state names written to the tables.
var goStateNames = [...]string{
	trace.GoUndetermined: "undetermined",
	trace.GoNotExist:     "notexist",
	trace.GoRunnable:     "runnable",
	trace.GoRunning:      "running",
	trace.GoWaiting:      "waiting",
	trace.GoSyscall:      "syscall",
}

// stateID is the dictionary index of a state in the state columns.
func stateID(s trace.GoState) int32 {
	if int(s) < len(goStateNames) {
		return int32(s)
	}
	return 0
}

func stateName(s trace.GoState) string {
	if int(s) < len(goStateNames) {
		return goStateNames[s]
	}
	return fmt.Sprintf("state%d", s)
}
