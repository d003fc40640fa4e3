package versions

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"

	exptrace "golang.org/x/exp/trace"
)

// traceTick is the resolution of the runtime's trace clock on Linux:
// nanotime() divided by traceTimeDiv (64), so a trace timestamp lies up to
// 64 ns before the instant it stands for.
//
// x/exp/trace also moves an event that would go back in time (its M's
// batch was merged late) to 1 ns after the event before it: such a time
// is later than the event, by any amount. Since clock readings are
// multiples of the tick, an event exactly 1 ns after its predecessor was
// moved. Lower bounds use only events that were not.
const traceTick = 64

// rawTrace is what one execution-trace window says, read straight from
// the raw file with x/exp/trace, independently of ingest/gotrace.
type rawTrace struct {
	format   int // the header's "go 1.N trace"
	first    int64
	last     int64                // first and last event times (trace clock)
	creates  map[int64]*rawCreate // by child goid
	ends     map[int64]*rawEnd    // by goid
	gcs      []rawGC              // GC mark phases, begun and ended in the window
	offsets  []int64              // per clock snapshot: Wall - Trace (Go 1.25+)
	monoSkew int64                // largest |Mono - Trace| of a clock snapshot
	pending  map[uint64][]*int64  // upper bounds waiting for their thread's next event
}

// rawCreate is a goroutine creation: its parent and the trace times of the
// event and of the next event the same OS thread wrote (0 if none), between
// which the go_create probe at the end of newproc1 must fire; moved says
// the reader moved the creation's time later (see traceTick).
type rawCreate struct {
	parent     int64
	at, before int64
	moved      bool
}

// rawEnd is a goroutine's end: the trace time of the event and of the
// next event the same thread wrote (0 if none). The go_exit probe in
// gdestroy fires before that next event (after the event for a goroutine
// that returned, before it for a finished coroutine).
type rawEnd struct{ at, before int64 }

// rawGC is one GC cycle's mark phase, and a time before its begin that
// the cycle's probes cannot precede: the begin itself, or when the reader
// moved it, the end of the previous cycle if that one was not moved (0
// when neither is known).
type rawGC struct{ after, begin, end int64 }

const gcRange = "GC concurrent mark phase"

// readRawTrace reads the trace file at path.
func readRawTrace(path string) (*rawTrace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	head, err := br.Peek(16)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rt := &rawTrace{creates: map[int64]*rawCreate{}, ends: map[int64]*rawEnd{}, pending: map[uint64][]*int64{}}
	if _, err := fmt.Sscanf(string(head), "go 1.%d trace", &rt.format); err != nil {
		return nil, fmt.Errorf("%s: header %q: %w", path, head, err)
	}
	r, err := exptrace.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	gcOpen, gcAfter, prevEnd := int64(-1), int64(0), int64(0)
	var prev int64
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		t := int64(ev.Time())
		moved := prev != 0 && t == prev+1
		prev = t
		if rt.first == 0 {
			rt.first = t
		}
		rt.last = t
		// CPU samples carry the time the profiling signal hit the
		// thread, which may be inside newproc1 still.
		if ev.Kind() != exptrace.EventStackSample {
			rt.resolve(ev.Thread(), t)
		}
		switch ev.Kind() {
		case exptrace.EventStateTransition:
			rt.transition(ev, t, moved)
		case exptrace.EventRangeBegin:
			if ev.Range().Name == gcRange {
				gcOpen, gcAfter = t, t
				if moved {
					gcAfter = prevEnd
				}
			}
		case exptrace.EventRangeEnd:
			if ev.Range().Name == gcRange && gcOpen >= 0 {
				rt.gcs = append(rt.gcs, rawGC{gcAfter, gcOpen, t})
				gcOpen, prevEnd = -1, t
				if moved {
					prevEnd = 0
				}
			}
		case exptrace.EventSync:
			if s := ev.Sync().ClockSnapshot; s != nil {
				rt.offsets = append(rt.offsets, s.Wall.UnixNano()-int64(s.Trace))
				rt.monoSkew = max(rt.monoSkew, abs(int64(s.Mono)-int64(s.Trace)))
			}
		}
	}
	return rt, nil
}

// resolve gives the events pending on thread th their upper bound.
func (rt *rawTrace) resolve(th exptrace.ThreadID, t int64) {
	if th == exptrace.NoThread {
		return
	}
	key := uint64(th)
	for _, b := range rt.pending[key] {
		*b = t
	}
	delete(rt.pending, key)
}

func (rt *rawTrace) transition(ev exptrace.Event, t int64, moved bool) {
	st := ev.StateTransition()
	if st.Resource.Kind != exptrace.ResourceGoroutine {
		return
	}
	from, to := st.Goroutine()
	id := int64(st.Resource.Goroutine())
	switch {
	case from == exptrace.GoNotExist && (to == exptrace.GoRunnable || to == exptrace.GoWaiting):
		c := &rawCreate{parent: int64(ev.Goroutine()), at: t, moved: moved}
		rt.creates[id] = c
		rt.await(ev.Thread(), &c.before)
	case to == exptrace.GoNotExist && from != exptrace.GoUndetermined:
		e := &rawEnd{at: t}
		rt.ends[id] = e
		rt.await(ev.Thread(), &e.before)
	}
}

// await sets *before to the time of thread th's next event.
func (rt *rawTrace) await(th exptrace.ThreadID, before *int64) {
	if th != exptrace.NoThread {
		rt.pending[uint64(th)] = append(rt.pending[uint64(th)], before)
	}
}

// formatOf is the trace format a toolchain writes: Go 1.24 kept 1.23's
// and Go 1.27 keeps 1.26's.
func formatOf(toolchain string) int {
	minor, _ := strconv.Atoi(Lang(toolchain)[len("go1."):])
	switch minor {
	case 24:
		return 23
	case 27:
		return 26
	}
	return minor
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
