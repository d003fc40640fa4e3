package analysis

import (
	"fmt"
	"strings"

	"github.com/leakscope/leakscope/analysis/internal/gosrc"
	"github.com/leakscope/leakscope/internal/format"
)

// Releases on a few objects. A release the program shows acting on at
// most n objects of its class for the goroutine's whole rest (each a
// parameter or captured variable no statement assigns, through fields
// only composite literals set: [gosrc.Cap] Objects) ends the waits on n
// objects at most, though its frames do not print which. A member of an
// errgroup holds the one group its closure captured: of the waiters in
// Wait that its family made, one per call, it can release one. When the
// waiters print the object they wait on, such a release wakes those on
// at most n objects among the waiters its homes reach: the latest started
// (the highest goid) stand for the objects it holds, as in wakeCurrent.
// Which waiters stay parked the dump does not say; how many, at least,
// it does.

// pickKey names a goroutine's bounded objects of one class.
type pickKey struct {
	y       *waitGor
	class   int32
	objects string
}

// boundedTo is how many objects of class c release cp can act on, for
// wakeInstances (0: any, or another rule decides).
func boundedTo(c gosrc.Class, cp gosrc.Cap) int {
	if !cp.Bounded || c.Escapes() || c.Opaque() || cp.Fresh > 0 {
		return 0
	}
	return len(cp.Objects)
}

// wakeInstances wakes, for a release of y bounded to n objects (see
// above), the addressed waiters of kw on at most n objects: those of y's
// homes, latest started first. It reports false, waking none, when y's
// homes are not known (it may hold any instance).
func (w *waitGraph) wakeInstances(kw *keyWaiters, y *waitGor, cp gosrc.Cap, n int, how string, queue []*waitGor) ([]*waitGor, bool) {
	c := w.prog.p.KeyClass(cp.Key)
	homes, any := w.homesOf(y, c)
	if any {
		return queue, false
	}
	if w.picked == nil {
		w.picked = map[pickKey]int{}
	}
	k := pickKey{y, c.ID(), strings.Join(cp.Objects, " ")}
	for w.picked[k] < n {
		x := latestParked(kw, homes)
		if x == nil {
			break
		}
		w.picked[k]++
		a := x.prog.addr
		note := fmt.Sprintf("%s, acting on at most %s of that kind (the latest started waiter's, %#x, stands for one)",
			how, format.Count(int64(n), "object"), a)
		for _, z := range kw.byAddr[a] {
			queue = wake(z, y, note, queue)
		}
		delete(kw.byAddr, a)
	}
	return queue, true
}

// latestParked is the waiter not reached yet with the highest goid under
// homes, dropping from the buckets' ends those already reached (buckets
// are in goid order).
func latestParked(kw *keyWaiters, homes []int64) *waitGor {
	var best *waitGor
	for _, h := range homes {
		b := kw.addressed.homes[h]
		for len(b) > 0 && b[len(b)-1].reach == reachMention {
			b = b[:len(b)-1]
		}
		if len(b) == 0 {
			delete(kw.addressed.homes, h)
			continue
		}
		kw.addressed.homes[h] = b
		if x := b[len(b)-1]; best == nil || x.goid > best.goid {
			best = x
		}
	}
	return best
}
