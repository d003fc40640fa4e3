package analysis

import (
	"sort"

	"github.com/leakscope/leakscope/internal/gosym"
)

// The verdict stage's joins between candidates are looked up in indexes
// built once per analysis, so that they cost n log n in the candidates
// and heap stacks, never one against every other.

// rankedCandidate is a candidate with its place in the candidates'
// order, which breaks ties between equal scores (the first one wins).
type rankedCandidate struct {
	x *candidate
	i int
}

// better reports whether a outranks b: a higher score, else earlier.
func (a rankedCandidate) better(b rankedCandidate) bool {
	return b.x == nil || a.x.sc.score > b.x.sc.score || a.x.sc.score == b.x.sc.score && a.i < b.i
}

// bestByFunc keeps per function name the best candidate of those filed
// under it.
type bestByFunc map[string]rankedCandidate

func (m bestByFunc) add(fn string, r rankedCandidate) {
	if r.better(m[fn]) {
		m[fn] = r
	}
}

// heldBy indexes the candidates that may own heap growth by each
// name an allocation stack's frames are compared with: the group's
// location, its entry and its creator.
type heldBy struct {
	loc, entry, creator bestByFunc
}

// newHeldBy files every candidate with a verdict (conf > 0) that
// scores at least half.
func newHeldBy(all []*candidate, half float64) *heldBy {
	o := &heldBy{loc: bestByFunc{}, entry: bestByFunc{}, creator: bestByFunc{}}
	for i, x := range all {
		if x.sc.conf == 0 || x.sc.score < half {
			continue
		}
		r := rankedCandidate{x, i}
		o.loc.add(x.s.loc.Function, r)
		o.entry.add(x.s.entry, r)
		o.creator.add(x.s.creator, r)
	}
	return o
}

// owner is the best-scoring group whose goroutines hold what an
// allocation stack allocates, nil for none. A group holds it when the
// stack runs through the group's own location or entry function; or its
// first frame outside the standard library is the creator, at a line the
// kept source shows handing the allocation to a goroutine it starts
// ([sourceCode.handedToGoroutine]) — the creator setting up what the new
// goroutines hold (channels, buffers, closures), not what it keeps for
// itself; or it is the group's goroutines being created (g structures
// allocated under runtime.newproc1 from the creator).
func (o *heldBy) owner(alloc []Frame, src *sourceCode) *candidate {
	var best rankedCandidate
	first := true
	for _, f := range alloc {
		if isStd(f) {
			continue
		}
		fn := f.Function
		if r, ok := o.loc[fn]; ok && r.better(best) {
			best = r
		}
		if r, ok := o.entry[fn]; ok && r.better(best) {
			best = r
		}
		if r, ok := o.creator[fn]; ok && first && r.better(best) && src.handedToGoroutine(f) {
			best = r
		}
		first = false
	}
	hasNewproc := false
	for _, f := range alloc {
		fn := f.Function
		if fn == "runtime.newproc1" || fn == "runtime.malg" {
			hasNewproc = true
		}
		if r, ok := o.creator[fn]; ok && hasNewproc && fn != "" && r.better(best) {
			best = r
		}
	}
	return best.x
}

// closureParents indexes the reported candidates by each function whose
// closure their goroutines start in ("pkg.TestX" for an entry
// "pkg.TestX.func1.2"), best first, for [foldParents].
type closureParents struct {
	by map[string][]rankedCandidate
	// next[key][i] skips, with path halving, the bucket's candidates
	// folded under another since the bucket was built.
	next map[string][]int
}

func newClosureParents(all []*candidate, minScore float64) *closureParents {
	c := &closureParents{by: map[string][]rankedCandidate{}, next: map[string][]int{}}
	for i, y := range all {
		if !reported(y.sc.score, minScore) {
			continue
		}
		for _, p := range gosym.Enclosing(y.s.entry) {
			c.by[p] = append(c.by[p], rankedCandidate{y, i})
		}
	}
	for key, b := range c.by {
		sort.Slice(b, func(i, j int) bool { return b[i].better(b[j]) })
		next := make([]int, len(b)+1)
		for i := range next {
			next[i] = i
		}
		c.next[key] = next
	}
	return c
}

// best is the best candidate of fn's closures not folded under another
// and other than x, nil for none.
func (c *closureParents) best(fn string, x *candidate) *candidate {
	b, next := c.by[fn], c.next[fn]
	i := c.free(b, next, 0)
	if i < len(b) && b[i].x == x {
		i = c.free(b, next, i+1)
	}
	if i < len(b) {
		return b[i].x
	}
	return nil
}

// free is the first index from i whose candidate has no cause yet.
func (c *closureParents) free(b []rankedCandidate, next []int, i int) int {
	for i < len(b) && (next[i] != i || b[i].x.cause != nil) {
		if next[i] == i {
			next[i] = i + 1 // folded: skip it from now on
		}
		next[i], i = next[next[i]], next[i]
	}
	return i
}
