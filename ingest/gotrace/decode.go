package gotrace

import (
	"fmt"

	"golang.org/x/exp/trace"
)

// recKind says what a decoded record describes.
type recKind uint8

const (
	recSync recKind = iota + 1
	recGo           // goroutine state transition
	recTaskBegin
	recTaskEnd
	recRegionBegin
	recRegionEnd
	recLog
	recMetric
	recRangeBegin
	recRangeEnd
	recEvent // undecoded state transition, see decodeOnReader
)

// rec is one trace event reduced to what ingest keeps, as the handler
// reads it.
//
// State transitions, nine in ten events, travel undecoded from the reader
// goroutine (see [item]) and are decoded by the handler goroutine, which
// has the spare time: StateTransition reads only the generation's string
// and stack tables, which are immutable once the generation is loaded
// (stack handles stay valid after the reader moves on for the same
// reason). The other events are decoded by the reader goroutine, because
// some of their accessors read tables the reader still extends (task
// types of task ends live in the generation's extra strings).
type rec struct {
	kind     recKind
	from, to trace.GoState
	ts       int64
	g        int64 // goroutine the record is about
	ctxG     int64 // goroutine executing the event (creator, for creations)
	id       uint64
	parent   uint64
	str      string // reason, name, category or range name
	msg      string
	stack    trace.Stack // transition stack (start stack for creations)
	stack2   trace.Stack // event stack (creator's stack for creations)
	val      uint64
	snap     trace.ClockSnapshot
	hasSnap  bool
	creation bool
}

// decodeOnReader completes it, just read into b, on the reader goroutine
// and reports whether the event is kept. State transitions are left as
// they are (kind recEvent), for decodeTransition on the handler goroutine;
// other events are decoded into b.decoded.
func decodeOnReader(it *item, b *batch) bool {
	if it.ev.Kind() == trace.EventStateTransition {
		it.kind = recEvent
		return true
	}
	b.decoded = append(b.decoded, rec{})
	if !decode(&it.ev, &b.decoded[len(b.decoded)-1]) {
		b.decoded = b.decoded[:len(b.decoded)-1]
		return false
	}
	it.kind = 0 // decoded, in b.decoded[it.i]
	it.i = int32(len(b.decoded) - 1)
	return true
}

// decodeTransition fills r from a state transition event and reports
// whether it is a goroutine's change of state. It sets every field the
// handler reads for recGo.
func decodeTransition(ev *trace.Event, r *rec) bool {
	st := ev.StateTransition()
	if st.Resource.Kind != trace.ResourceGoroutine {
		return false
	}
	from, to := st.Goroutine()
	if from == to {
		return false
	}
	r.kind = recGo
	r.ts = int64(ev.Time())
	r.ctxG = int64(ev.Goroutine())
	r.from, r.to = from, to
	r.g = int64(st.Resource.Goroutine())
	r.str = st.Reason
	r.stack = st.Stack
	r.creation = from == trace.GoNotExist
	r.stack2 = trace.NoStack
	if r.creation {
		r.stack2 = ev.Stack()
	}
	return true
}

// decode fills r from ev and reports whether the event is kept.
func decode(ev *trace.Event, r *rec) bool {
	*r = rec{ts: int64(ev.Time()), ctxG: int64(ev.Goroutine())}
	switch ev.Kind() {
	case trace.EventStateTransition:
		if !decodeTransition(ev, r) {
			return false
		}
	case trace.EventTaskBegin, trace.EventTaskEnd:
		t := ev.Task()
		r.kind = recTaskBegin
		if ev.Kind() == trace.EventTaskEnd {
			r.kind = recTaskEnd
		}
		r.id, r.parent, r.str = uint64(t.ID), uint64(t.Parent), t.Type
		r.g = r.ctxG
	case trace.EventRegionBegin, trace.EventRegionEnd:
		rg := ev.Region()
		r.kind = recRegionBegin
		if ev.Kind() == trace.EventRegionEnd {
			r.kind = recRegionEnd
		}
		r.id, r.str = uint64(rg.Task), rg.Type
		r.g = r.ctxG
	case trace.EventLog:
		l := ev.Log()
		r.kind = recLog
		r.id, r.str, r.msg = uint64(l.Task), l.Category, l.Message
		r.g = r.ctxG
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
		if rg.Scope.Kind == trace.ResourceGoroutine {
			r.g = int64(rg.Scope.Goroutine())
		}
	case trace.EventSync:
		s := ev.Sync()
		r.kind = recSync
		r.val = uint64(s.N)
		if s.ClockSnapshot != nil {
			r.snap = *s.ClockSnapshot
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
