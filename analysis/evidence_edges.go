package analysis

import (
	"slices"
	"sort"

	"github.com/leakscope/leakscope/analysis/internal/gosrc"
)

// maxEdges bounds the wait-for edges kept per goroutine: cycles and
// causes need a few, the evidence names fewer.
const maxEdges = 8

// anyHome stands for every home in a capability index: the goroutine
// may hold any instance of the class.
const anyHome = -1

// linkEdges gives each parked goroutine nothing reached its wait-for
// edges: the parked goroutines that could release what it waits on (from
// the program for a decided wait, from the frames' words for the
// others), at most maxEdges, lowest goids first. Cycles and causes are
// read from them.
func (w *waitGraph) linkEdges() {
	var caps map[gosrc.Key]map[int64][]*waitGor
	if w.prog != nil {
		caps = w.capIndex()
	}
	words := w.wordIndex()
	for _, x := range w.gs {
		if x.class != classParked || x.reach == reachMention || x.selfHeld != "" {
			continue
		}
		if x.prog != nil {
			x.wakers = w.progEdges(x, caps)
		} else {
			x.wakers = words.edges(x)
		}
	}
}

// capIndex indexes the parked goroutines nothing reached by the
// operations their futures hold, by the homes whose instance they hold
// (anyHome for a class that escapes or a chain cut).
func (w *waitGraph) capIndex() map[gosrc.Key]map[int64][]*waitGor {
	out := map[gosrc.Key]map[int64][]*waitGor{}
	for _, y := range w.gs {
		if y.class != classParked || y.reach == reachMention {
			continue
		}
		for _, cp := range w.futureOf(y).Caps {
			m := out[cp.Key]
			if m == nil {
				m = map[int64][]*waitGor{}
				out[cp.Key] = m
			}
			c := w.prog.p.KeyClass(cp.Key)
			homes, any := w.homesOf(y, c)
			if c.Escapes() || any {
				homes = []int64{anyHome}
			}
			for _, h := range homes {
				m[h] = append(m[h], y)
			}
		}
	}
	return out
}

// maxEdgeScan bounds the candidates looked at for a waiter whose
// instance the dump does not place.
const maxEdgeScan = 256

// progEdges lists the parked goroutines whose futures can end x's wait
// on x's instance: those holding it by home, or, the home not known, any
// not holding it through another root of one type (see rootsOf).
func (w *waitGraph) progEdges(x *waitGor, caps map[gosrc.Key]map[int64][]*waitGor) []*waitGor {
	var out []*waitGor
	add := func(ys []*waitGor, c gosrc.Class, check bool) {
		for i, y := range ys {
			if len(out) >= maxEdges || i >= maxEdgeScan {
				return
			}
			if y != x && !containsGor(out, y) && !progCoWaiters(x, y) && (!check || !w.otherRoot(x, y, c)) {
				out = append(out, y)
			}
		}
	}
	for i, k := range x.prog.keys {
		m := caps[k]
		c := w.prog.p.KeyClass(k)
		add(m[anyHome], c, false)
		if hs := x.prog.homes[i]; len(hs) > 0 {
			for _, h := range hs {
				add(m[h], c, false)
			}
			continue
		}
		for _, h := range sortedHomes(m) {
			if h != anyHome {
				add(m[h], c, true)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].goid < out[j].goid })
	return out
}

// otherRoot reports whether x and y hold class c through roots of one
// type that differ: different instances.
func (w *waitGraph) otherRoot(x, y *waitGor, c gosrc.Class) bool {
	mine := map[string][]uint64{}
	for _, r := range w.rootsOf(y, c) {
		mine[r.typ] = append(mine[r.typ], r.v)
	}
	other := false
	for _, r := range w.rootsOf(x, c) {
		vs, ok := mine[r.typ]
		if !ok {
			continue
		}
		if slices.Contains(vs, r.v) {
			return false
		}
		other = true
	}
	return other
}

// progCoWaiters reports whether y waits as x does, on the same class of
// objects with the same operation (and, when the frames print both
// objects, on the same one): y can release it only once it is released.
func progCoWaiters(x, y *waitGor) bool {
	if y.prog == nil || x.block.obj != 0 && y.block.obj != 0 && len(x.objs) > 0 && len(y.objs) > 0 && x.objs[0] != y.objs[0] {
		return false
	}
	for _, a := range x.prog.w.Cases {
		for _, b := range y.prog.w.Cases {
			if !a.Default && !b.Default && a.Op == b.Op && a.Obj.ID() == b.Obj.ID() {
				return true
			}
		}
	}
	return false
}

// wordIndex is, per object, the goroutines whose frames point to it:
// those that do not wait on it, and those that do by co-waiting group.
type wordIndex struct {
	others map[uint64][]*waitGor
	groups map[uint64]map[coGroup][]*waitGor
}

// wordIndex indexes the pointer words of the snapshot's goroutines.
func (w *waitGraph) wordIndex() *wordIndex {
	ix := &wordIndex{others: map[uint64][]*waitGor{}, groups: map[uint64]map[coGroup][]*waitGor{}}
	for _, y := range w.gs {
		if y.class == classInfra || y.class == classParked && y.reach == reachMention {
			continue
		}
		for _, o := range y.words {
			if y.class == classParked && y.prog == nil {
				m := ix.groups[o]
				if m == nil {
					m = map[coGroup][]*waitGor{}
					ix.groups[o] = m
				}
				g := groupOn(y, o)
				m[g] = append(m[g], y)
				continue
			}
			ix.others[o] = append(ix.others[o], y)
		}
	}
	return ix
}

// edges lists the goroutines pointing to what x waits on that do not
// wait on it the way x does.
func (ix *wordIndex) edges(x *waitGor) []*waitGor {
	var out []*waitGor
	add := func(ys []*waitGor) {
		for _, y := range ys {
			if len(out) >= maxEdges {
				return
			}
			if y != x && !containsGor(out, y) {
				out = append(out, y)
			}
		}
	}
	for _, o := range x.objs {
		add(ix.others[o])
		own := groupOn(x, o)
		for _, g := range sortedCoGroups(ix.groups[o]) {
			if !coWaiting(own, g) {
				add(ix.groups[o][g])
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].goid < out[j].goid })
	return out
}
