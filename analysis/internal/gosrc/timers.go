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
func (q *Query) TimerReleases(k Key) []Stmt {
	if !q.tracked[k] {
		return nil
	}
	var out []Stmt
	for _, t := range q.p.flow.timers {
		s := q.sums[t.f]
		if s == nil || !slices.Contains(s.any, k) && !slices.Contains(s.unmatched, k) {
			continue
		}
		pos := q.p.fset.Position(t.pos)
		out = append(out, Stmt{File: pos.Filename, Line: pos.Line, Func: t.f.Name})
	}
	return out
}
