package analysis

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis/internal/tables"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// ancNode is a node of the creation tree while it is built, with its
// children keyed by entry function and creator function.
type ancNode struct {
	n    *AncestryNode
	kids map[[2]string]*ancNode
}

func newAncNode(n *AncestryNode) *ancNode {
	return &ancNode{n: n, kids: map[[2]string]*ancNode{}}
}

// tree rolls the population up by entry function along creator links.
func (p *population) tree() *AncestryTree {
	t := &AncestryTree{Sources: p.sources, Goroutines: len(p.recs), AliveAt: tsTime(p.aliveAt), chains: map[int64]int64{}, nodeOf: map[int64]*AncestryNode{}, alive: map[int64]bool{}}
	for goid, r := range p.recs {
		if r.parent != 0 {
			t.chains[goid] = r.parent
		}
	}
	root := newAncNode(nil)
	placed := map[int64]*ancNode{}
	var path []int64
	for goid := range p.recs {
		// Walk up to a goroutine already placed (or the root), then place
		// the path top-down.
		var top int64
		path, top = p.pathUp(goid, placed, path[:0])
		parent := root
		if top != 0 && placed[top] != nil {
			parent = placed[top]
		}
		p.placeDown(t, path, parent, placed)
	}
	t.Roots = root.children()
	number(t.Roots, new(int))
	return t
}

// number gives each node its id, in the order the tree lists them (each
// node before its children), from 1.
func number(nodes []*AncestryNode, next *int) {
	for _, n := range nodes {
		*next++
		n.ID = *next
		number(n.Children, next)
	}
}

// pathUp appends to path goid and its creators, up to the first one
// already placed, one outside the population or a cycle, and returns it
// with the goroutine it stopped at (0 for the root). A path stops at 64
// goroutines.
func (p *population) pathUp(goid int64, placed map[int64]*ancNode, path []int64) ([]int64, int64) {
	g := goid
	for g != 0 && placed[g] == nil && len(path) < 64 {
		path = append(path, g)
		r := p.recs[g]
		if r == nil {
			break
		}
		g = r.parent
		if p.recs[g] == nil {
			g = 0
		}
		for _, q := range path {
			if q == g {
				g = 0
			}
		}
	}
	return path, g
}

// placeDown places path (leaf first) under parent from its top down,
// counting each goroutine, and whether it is alive, in the node of its
// entry and creator functions.
func (p *population) placeDown(t *AncestryTree, path []int64, parent *ancNode, placed map[int64]*ancNode) {
	for i := len(path) - 1; i >= 0; i-- {
		r := p.recs[path[i]]
		if r == nil {
			break
		}
		name := r.entry
		k := [2]string{name, r.creatorFn}
		x := parent.kids[k]
		if x == nil {
			x = newAncNode(&AncestryNode{Function: name, CreatedBy: r.creatorFn, Label: groupLabel("goroutine", name, r.creatorFn)})
			parent.kids[k] = x
		}
		x.n.Count++
		if r.alive {
			x.n.Alive++
			t.alive[path[i]] = true
		}
		placed[path[i]] = x
		t.nodeOf[path[i]] = x.n
		parent = x
	}
}

// children gives x's children with their subtrees summed, the largest
// subtree first.
func (x *ancNode) children() []*AncestryNode {
	out := make([]*AncestryNode, 0, len(x.kids))
	for _, k := range x.kids {
		k.n.Children = k.children()
		k.n.Subtree, k.n.SubtreeAlive = k.n.Count, k.n.Alive
		for _, c := range k.n.Children {
			k.n.Subtree += c.Subtree
			k.n.SubtreeAlive += c.SubtreeAlive
		}
		out = append(out, k.n)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Subtree != out[j].Subtree {
			return out[i].Subtree > out[j].Subtree
		}
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Function+out[i].CreatedBy < out[j].Function+out[j].CreatedBy
	})
	return out
}

func ancestry(b *bundle.Bundle, mem memory.Allocator) (*AncestryTree, error) {
	st, err := loadStacks(b, mem, nil)
	if err != nil {
		return nil, err
	}
	d, err := readDumps(b, mem, true)
	if err != nil {
		return nil, err
	}
	p, _, err := loadPopulation(b, mem, st, d)
	if err != nil {
		return nil, err
	}
	return p.tree(), nil
}

// Chain returns the creator goids of goid, nearest first, as far as the
// bundle knows them.
func (t *AncestryTree) Chain(goid int64) []int64 {
	var out []int64
	seen := map[int64]bool{goid: true}
	for g := t.chains[goid]; g != 0 && !seen[g]; g = t.chains[g] {
		seen[g] = true
		out = append(out, g)
	}
	return out
}

// Selection says which rows of the bundle one suspect's figures count,
// so that a view of the suspect (its flame graph, its goroutines in the
// ancestry tree or the timeline) counts exactly the same thing at the
// same time: at Snapshot, the goroutines Goids (a goroutine suspect from
// dumps) or the samples of Profile on Stacks (a heap suspect, or a
// goroutine suspect from goroutine profiles).
type Selection struct {
	ID       string
	Snapshot time.Time
	Goids    []int64
	Profile  string
	Stacks   []int64
}

// Has reports whether goroutine goid is a member of the selection (a
// goroutine suspect from dumps: Goids is sorted).
func (s Selection) Has(goid int64) bool {
	_, ok := slices.BinarySearch(s.Goids, goid)
	return ok
}

// Page returns up to limit member goids from offset on, in goid order,
// and the offset of the next page (0 at the end).
func (s Selection) Page(offset, limit int) (goids []int64, next int) {
	if offset >= len(s.Goids) || limit <= 0 {
		return []int64{}, 0
	}
	end := min(len(s.Goids), offset+limit)
	if end < len(s.Goids) {
		next = end
	}
	return slices.Clone(s.Goids[offset:end]), next
}

// Select returns the selection of suspect id: for a goroutine suspect from
// dumps it reads the goroutines table at the suspect's CountAt and keeps
// the members of the groups the suspect was built from, so len(Goids) is
// its Count; Goids are sorted, so [Selection.Has] answers membership.
func (r *Report) Select(b *bundle.Bundle, mem memory.Allocator, id string) (Selection, error) {
	for _, s := range r.Suspects {
		if s.ID != id {
			continue
		}
		sel := Selection{ID: id, Snapshot: s.CountAt}
		switch {
		case s.Kind == KindHeap:
			sel.Profile, sel.Stacks = schema.ProfileHeap, s.StackIDs
		case len(s.keys) > 0:
			goids, err := members(b, mem, s)
			if err != nil {
				return sel, err
			}
			slices.Sort(goids)
			sel.Goids = slices.Compact(goids)
		case len(s.StackIDs) > 0:
			sel.Profile, sel.Stacks = schema.ProfileGoroutine, s.StackIDs
		default:
			return sel, fmt.Errorf("suspect %s has no snapshot to select from (it comes from trace windows only)", id)
		}
		return sel, nil
	}
	return Selection{}, fmt.Errorf("no suspect %q", id)
}

// members reads the goids of a goroutine suspect's groups at its CountAt.
func members(b *bundle.Bundle, mem memory.Allocator, s Suspect) ([]int64, error) {
	want := map[groupKey]bool{}
	for _, k := range s.keys {
		want[k] = true
	}
	at := s.CountAt.UnixNano()
	var out []int64
	err := tables.ReadGoroutines(b, mem, func(c tables.GoroutineCols) {
		ts, goid, state, stack, creator := c.SnapshotTS, c.Goid, c.State, c.Stack, c.CreatorFunction
		for r := 0; r < c.Rows; r++ {
			if ts(r) != at {
				continue
			}
			if want[groupKey{state: normState(state(r)), stackID: stack(r), creator: creator(r)}] && s.only.has(goid(r)) {
				out = append(out, goid(r))
			}
		}
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read goroutines: %w", err)
	}
	return out, nil
}
