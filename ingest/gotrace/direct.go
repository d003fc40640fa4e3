package gotrace

import "golang.org/x/exp/trace"

// With one worker, the decoder runs on the handler's goroutine and hands
// it each step as it makes it (directOut), instead of encoding the steps
// into parts. Goroutine state changes skip the steps too: the handler's
// live goroutine is the life in progress, so each change is applied to it
// at once (applyTransition) rather than summed up in a life that ends
// with the goroutine or the generation.

// directOut applies a generation's steps to the handler as the decoder
// makes them, on the handler's goroutine: what mergePart does with the
// same steps encoded in parts (one worker, see pumpDirect).
type directOut struct{ h *handler }

func (o directOut) lifeStart(s *lifeStart) {
	o.h.fallbackClock()
	o.h.startLife(s)
}

func (o directOut) lifeEnd(e *lifeEnd) { o.h.endLife(e) }

func (o directOut) note(r *rec) {
	if r.kind != recSync {
		o.h.fallbackClock()
	}
	o.h.handle(r)
}

func (o directOut) newStack(s *genStack) { o.h.genIDs = append(o.h.genIDs, o.h.stacks.id(s)) }

// applyTransition follows one goroutine state change on the handler h.
// A goroutine's first event in a generation (its creation, or its status
// when the generation began, which comes from the undetermined state)
// starts a life as in parts mode; every later one, and the end, is
// applied to the live goroutine at once as a life's end of that one
// change (handler.endLife).
func (d *decoder) applyTransition(h *handler, ev *trace.Event, st *trace.StateTransition, from, to trace.GoState) {
	ts := int64(ev.Time())
	d.sum.last = ts
	d.sum.events++
	goid := int64(st.Resource.Goroutine())
	e := &d.lastEnd
	*e = lifeEnd{goid: goid}
	if h.live.get(goid) == nil || from == trace.GoUndetermined {
		d.startLife(ev, st, goid, ts, from, to)
	} else {
		var si int32
		if st.Stack != trace.NoStack {
			si = d.stack(st.Stack)
		}
		e.change(si, d.roots[si] != "", to, st.Reason)
	}
	if to == trace.GoNotExist {
		e.ended(ts, from)
	}
	if e.flags != 0 {
		h.endLife(e)
	}
}

// startLife hands on the start of a goroutine's life in the generation.
func (d *decoder) startLife(ev *trace.Event, st *trace.StateTransition, goid, ts int64, from, to trace.GoState) {
	// In the decoder, not on the stack: out may keep the pointer for the
	// call, which makes a local escape.
	s := &d.start
	*s = lifeStart{goid: goid, ts: ts, firstTo: to, firstStack: d.stack(st.Stack)}
	if from == trace.GoNotExist {
		s.flags |= lifeCreated
		if p := int64(ev.Goroutine()); p > 0 {
			s.parent = p
		}
		s.creationStack = d.stack(ev.Stack())
	}
	d.sum.lives++
	d.out.lifeStart(s)
}
