package gosrc

import (
	"go/token"
	"slices"
)

// Timer callbacks. A function handed to time.AfterFunc runs, when its
// timer fires, on a goroutine that does not exist before: no dump shows
// it, and no goroutine's future holds it. What it can release, it may
// release at any time (its timer may still be pending), so a wait one of
// them can end is a timer wait. One handed to context.AfterFunc runs the
// same way once its context is done: it counts when a deadline, a
// cancel some statement calls, or code not read can close that context.

// timerCallback is a function handed to time.AfterFunc or
// context.AfterFunc, and where; done is the context's Done channel
// (none for time.AfterFunc).
type timerCallback struct {
	f    *Func
	pos  token.Pos
	done node
}

// TimerReleases lists, for a tracked operation, the statements handing
// time.AfterFunc (or context.AfterFunc, on a context that can be done) a
// function that can perform it (through the calls it makes); nil when
// none does.
func (q *Query) TimerReleases(k Key) []Stmt { return q.timerStmts[k] }

// indexTimers records, once the summaries are made, the tracked
// operations each timer callback can perform.
func (q *Query) indexTimers() {
	q.timerStmts = map[Key][]Stmt{}
	for _, t := range q.p.flow.timers {
		s := q.sums[t.f]
		if s == nil || !q.p.canClose(t.done) {
			continue
		}
		pos := q.p.fset.Position(t.pos)
		st := Stmt{File: pos.Filename, Line: pos.Line, Func: t.f.Name}
		for _, k := range slices.Concat(s.any, s.unmatched) {
			if !slices.Contains(q.timerStmts[k], st) {
				q.timerStmts[k] = append(q.timerStmts[k], st)
			}
		}
	}
}

// canClose reports whether a context's Done channel (none: no context)
// can be closed: by a deadline, by a cancel some statement calls, or by
// code not read.
func (p *Program) canClose(done node) bool {
	if done == none {
		return true
	}
	timer, opaque, ok := p.class(done).DoneOf()
	return !ok || timer || opaque || p.class(done).CancelCalled()
}
