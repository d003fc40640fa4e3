package analysis

import (
	"fmt"
	"math"
	"time"

	"github.com/leakscope/leakscope/internal/format"
)

// condList is one Cond's notify list as one snapshot shows it: the
// goroutines waiting on it and the highest ticket among them.
type condList struct {
	waiters   int
	maxTicket int64
}

// signalled is how many of a Cond's Waits have ended: every Wait takes
// the next ticket (sync.runtime_notifyListWait's t), and only Signal or
// Broadcast ends one, so maxTicket+1 Waits were made and the waiters
// seen now are the ones not yet ended.
func (c condList) signalled() int64 { return c.maxTicket + 1 - int64(c.waiters) }

// signalledFar: a Cond counts as being signalled when at least this many
// Waits, and at least twice as many as wait now, have ended.
const signalledFar = 8

// condProgress marks the Cond waiters of the latest snapshot whose Cond
// the tickets show to have been signalled far more often than goroutines
// wait on it now: a Cond the program signals, not one never signalled.
func (w *waitGraph) condProgress() {
	lists := map[uint64]*condList{}
	for _, x := range w.gs {
		if x.ticket < 0 || x.block.obj == 0 || x.kind != "cond" {
			continue
		}
		c := lists[x.block.obj]
		if c == nil {
			c = &condList{maxTicket: -1}
			lists[x.block.obj] = c
		}
		c.waiters++
		c.maxTicket = max(c.maxTicket, x.ticket)
	}
	for _, x := range w.gs {
		c := lists[x.block.obj]
		if x.ticket < 0 || x.kind != "cond" || c == nil {
			continue
		}
		if n := c.signalled(); n >= signalledFar && n >= 2*int64(c.waiters) {
			x.signalled = fmt.Sprintf("the Cond's notify list %s has handed out tickets up to %#x (%d Waits) and %d goroutines wait on it now: at least %d Waits were ended by Signal or Broadcast",
				waitObjectText(x.block.obj, x.block.objAt), c.maxTicket, c.maxTicket+1, c.waiters, n)
		}
	}
}

// addProgress counts a site's members that the runtime's own counters
// show making progress, with the basis of the first (lowest goid) of
// each kind: woken between the two latest snapshots, or waiting on a
// Cond that is being signalled.
func (f *stuckFacts) addProgress(x *waitGor) {
	if x.woken != "" {
		f.woken++
		if f.wokenBasis == "" {
			f.wokenBasis = x.woken
		}
	}
	if x.signalled != "" {
		f.signalled++
		if f.signalledBasis == "" {
			f.signalledBasis = x.signalled
		}
	}
}

// progressWeights adds the progress evidence of a site, each fact with
// its basis: members woken between snapshots, a Cond being signalled,
// and persistence only where a wake-up would have shown.
func progressWeights(s *site, f *stuckFacts, add func(string, float64, string, ...any)) {
	n := float64(max(f.parked, 1))
	if f.woken > 0 {
		add("progress", wWoken*float64(f.woken)/n, "%d of %d were woken between the two latest snapshots, by the runtime's own counters (%s)", f.woken, f.parked, f.wokenBasis)
	}
	if f.signalled > 0 {
		w := wSignalled * float64(f.signalled) / n
		why := ""
		if s.maxWait >= 1 {
			w /= 2
			why = fmt.Sprintf("; they have waited up to %s since", format.Count(int64(s.maxWait), "minute"))
		}
		add("progress", w, "%d of %d wait on a Cond that is being signalled: %s%s", f.signalled, f.parked, f.signalledBasis, why)
	}
}

// persistWeights weighs persistence across snapshots: only members whose
// wake-up would have shown in their line (a Cond ticket, a wait of a
// minute or more) count; a goroutine woken and parked again at the same
// place looks the same in the next dump.
func persistWeights(s *site, f *stuckFacts, add func(string, float64, string, ...any)) {
	p := s.persist
	if p.persisted == 0 {
		return
	}
	why := "while other goroutines came, went or moved"
	if !f.progressed {
		why = "(nothing else in the process changed either)"
	}
	if p.visible > 0 {
		w := float64(p.visible) / float64(p.members) * math.Min(wPersistMax, wPersistBase+wPersistPerLn*math.Log1p(f.spanSec))
		if !f.progressed {
			w *= wPersistFrozen
		}
		add("persistent", w, "%d of %d parked at the same stack for %s across consecutive snapshots, where a wake-up would have shown (a new Cond ticket, a wait count started again), %s", p.visible, p.members, format.Duration(time.Duration(f.spanSec*float64(time.Second))), why)
	}
	if blind := p.persisted - p.visible; blind > 0 {
		add("persistent", 0, "%d of %d were parked at the same stack in consecutive snapshots %s; a goroutine woken and parked again there prints the same line, so this is no evidence", blind, p.members, why)
	}
}
