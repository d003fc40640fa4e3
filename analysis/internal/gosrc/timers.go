package gosrc

import (
	"go/token"
	"slices"
)

// Timer callbacks. A function handed to time.AfterFunc runs, when its
// timer fires, on a goroutine that does not exist before: no dump shows
// it, and no goroutine's future holds it. What it can release, it may
// release at any time (its timer may still be pending), so a wait one of
// them can end is a timer wait.

// timerCallback is a function handed to time.AfterFunc, and where.
type timerCallback struct {
	f   *Func
	pos token.Pos
}

// TimerReleases lists, for a tracked operation, the statements handing
// time.AfterFunc a function that can perform it (through the calls it
// makes); nil when none does.
func (q *Query) TimerReleases(k Key) []Stmt { return q.timerStmts[k] }

// indexTimers records, once the summaries are made, the tracked
// operations each timer callback can perform.
func (q *Query) indexTimers() {
	q.timerStmts = map[Key][]Stmt{}
	for _, t := range q.p.flow.timers {
		s := q.sums[t.f]
		if s == nil {
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
