package flame

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// RootName is the name of every tree's root node.
const RootName = "root"

// unknownStack names the single frame given to a stack id the stacks table
// does not hold, so that its value still counts.
const unknownStack = "[unknown stack]"

// FromBundle builds the tree q asks for from bundle b. It reads the frame
// and stack dictionaries, then streams the samples (or goroutines) table.
func FromBundle(b *bundle.Bundle, mem memory.Allocator, q Query) (*Tree, error) {
	s, err := LoadStacks(b, mem)
	if err != nil {
		return nil, err
	}
	return s.Build(b, mem, q)
}

// Build builds the tree q asks for from bundle b, whose dictionaries s
// holds. A samples table cut short by a crash is read up to its last
// complete batch (see [Tree.Truncated]).
func (s *Stacks) Build(b *bundle.Bundle, mem memory.Allocator, q Query) (*Tree, error) {
	t, n, nv, bv, err := s.selectValues(b, mem, q)
	if err != nil {
		return nil, err
	}
	t.Root, t.OwnHidden = s.tree(n, nv, bv)
	t.PercentOf = percentOf(nv, bv, t.Diff())
	return t, nil
}

// selectValues reads the values q selects: the tree's metadata (no root
// yet), the normalized query, and the new and base values per stack id.
func (s *Stacks) selectValues(b *bundle.Bundle, mem memory.Allocator, q Query) (*Tree, *normalized, []int64, []int64, error) {
	n, err := normalize(q)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	src := n.Source
	if src == "" {
		src = SourceSamples
	}
	sel, truncated, err := s.read(b, mem, n, src)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if n.Source == "" && n.Profile == schema.ProfileGoroutine && len(sel.seen) == 0 {
		src = SourceGoroutines
		if sel, truncated, err = s.read(b, mem, n, src); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	t, nv, bv, err := sel.result(src, n.Source == "" && src == SourceGoroutines)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	t.Truncated = truncated
	t.Inverted = n.Invert
	return t, n, nv, bv, nil
}

// percentOf is the total pprof takes percentages of: the size of every
// selected sample before focus and ignore, or in a diff the base's.
func percentOf(nv, bv []int64, diff bool) int64 {
	vals := nv
	if diff {
		vals = bv
	}
	var t int64
	for _, v := range vals {
		t += abs(v)
	}
	return t
}

// read streams the source table through a new selector.
func (s *Stacks) read(b *bundle.Bundle, mem memory.Allocator, n *normalized, src string) (*selector, bool, error) {
	sel := newSelector(n, s.NumStacks())
	table, add := schema.TableSamples, addSamples
	if src == SourceGoroutines {
		table, add = schema.TableGoroutines, addGoroutines
	}
	err := b.ReadTable(table, mem, func(rec arrow.Record) error { return add(rec, sel) })
	var pe *bundle.PartialError
	if errors.As(err, &pe) {
		return sel, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s of %s: %w", table, b.Dir, err)
	}
	return sel, false, nil
}

// result checks that the query found its snapshots and returns the tree's
// metadata with the new and base values per stack id.
func (sel *selector) result(src string, fellBack bool) (*Tree, []int64, []int64, error) {
	q := sel.q
	what := q.Profile + " samples"
	switch {
	case fellBack:
		what = "goroutine samples and no goroutine dump"
	case src == SourceGoroutines:
		what = "goroutine dump"
	}
	t := &Tree{Profile: q.Profile, Value: q.Value, Unit: Unit(q.Value), Source: src, Count: 1, Base: q.Base}
	if len(sel.seen) == 0 {
		return nil, nil, nil, fmt.Errorf("bundle has no %s: %w", what, ErrNoSnapshot)
	}
	if sel.nonNull == 0 {
		return nil, nil, nil, fmt.Errorf("the %s have no %s values: %w", what, q.Value, ErrNoSnapshot)
	}
	if q.Base != 0 && !sel.base.found {
		return nil, nil, nil, fmt.Errorf("no %s at base snapshot %d (%s): %w", what, q.Base, sel.snapshotsHint(), ErrNoSnapshot)
	}
	var nv []int64
	switch {
	case !q.rangeMode:
		if !sel.cur.found {
			return nil, nil, nil, fmt.Errorf("no %s at snapshot %d (%s): %w", what, q.Snapshot, sel.snapshotsHint(), ErrNoSnapshot)
		}
		nv, t.Snapshot, t.First = sel.cur.vals, sel.cur.ts, sel.cur.ts
	case q.cumulative:
		if !sel.cur.found {
			return nil, nil, nil, fmt.Errorf("no %s between %d and %d (%s): %w", what, q.From, q.To, sel.snapshotsHint(), ErrNoSnapshot)
		}
		nv, t.Snapshot, t.First = sel.cur.vals, sel.cur.ts, sel.cur.ts
		if sel.first.ts != sel.cur.ts {
			for i, v := range sel.first.vals {
				if i >= len(nv) {
					nv = append(nv, 0)
				}
				nv[i] -= v
			}
			t.First, t.Delta = sel.first.ts, true
		}
	default:
		if !sel.sum.found {
			return nil, nil, nil, fmt.Errorf("no %s between %d and %d (%s): %w", what, q.From, q.To, sel.snapshotsHint(), ErrNoSnapshot)
		}
		nv, t.Snapshot, t.First, t.Count = sel.sum.vals, sel.sum.ts, sel.sum.ts, 0
		for ts := range sel.seen {
			if q.inRange(ts) {
				t.Count++
				t.First = min(t.First, ts)
			}
		}
	}
	return t, nv, sel.base.vals, nil
}

// snapshotsHint describes the snapshots present, for error messages.
func (sel *selector) snapshotsHint() string {
	ts := make([]int64, 0, len(sel.seen))
	for t := range sel.seen {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	if len(ts) > 5 {
		return fmt.Sprintf("%d snapshots from %d to %d", len(ts), ts[0], ts[len(ts)-1])
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprint(t)
	}
	return "snapshots: " + strings.Join(parts, ", ")
}

// anode is a tree node under construction, in a flat arena. Children form
// a singly linked list (first, next; 0 is "none", as the root is never a
// child); nodes with more than wideFanout children are also indexed in a
// map.
type anode struct {
	parent, fn  int32
	first, next int32
	nkids       int32
	line        int64
	self, total int64
	baseTotal   int64
	absDelta    int64
	// own and other say whether stacks of the capture's own machinery
	// (see [Own]) and stacks of anything else pass through the node.
	own, other bool
}

const wideFanout = 8

// arena builds the call tree.
type arena struct {
	nodes []anode
	wide  map[uint64]int32 // (parent, fn) -> child, for wide parents only
}

func wideKey(parent, fn int32) uint64 { return uint64(uint32(parent))<<32 | uint64(uint32(fn)) }

// child returns the child of parent for function fn, creating it.
func (a *arena) child(parent, fn int32) int32 {
	p := &a.nodes[parent]
	if p.nkids <= wideFanout {
		for c := p.first; c != 0; c = a.nodes[c].next {
			if a.nodes[c].fn == fn {
				return c
			}
		}
	} else if c, ok := a.wide[wideKey(parent, fn)]; ok {
		return c
	}
	c := int32(len(a.nodes))
	a.nodes = append(a.nodes, anode{parent: parent, fn: fn, next: p.first})
	p = &a.nodes[parent]
	p.first = c
	p.nkids++
	switch {
	case p.nkids == wideFanout+1:
		for k := p.first; k != 0; k = a.nodes[k].next {
			a.wide[wideKey(parent, a.nodes[k].fn)] = k
		}
	case p.nkids > wideFanout+1:
		a.wide[wideKey(parent, fn)] = c
	}
	return c
}

// tree builds the node tree from new and base values per stack id; with
// HideOwn it also returns what the left-out stacks of the capture's own
// machinery held.
func (s *Stacks) tree(q *normalized, nv, bv []int64) (*Node, *Hidden) {
	focus, ignore := s.matchFuncs(q.focus), s.matchFuncs(q.ignore)
	unknownFn := int32(len(s.funcs))
	a := &arena{nodes: []anode{{parent: -1, fn: -1}}, wide: map[uint64]int32{}}
	var hidden *Hidden
	if q.HideOwn {
		hidden = &Hidden{}
	}
	var one [1]int32
	for id := 0; id < max(len(nv), len(bv)); id++ {
		var n, b int64
		if id < len(nv) {
			n = nv[id]
		}
		if id < len(bv) {
			b = bv[id]
		}
		if n == 0 && b == 0 {
			continue
		}
		frames, known := s.frames(int64(id))
		fnOf := s.fn
		if !known {
			frames = one[:]
			fnOf = func(int32) int32 { return unknownFn }
		}
		if !keep(frames, fnOf, focus, ignore) {
			continue
		}
		d := n - b
		own := known && s.ownStack(frames)
		if own && hidden != nil {
			hidden.Total += d
			hidden.BaseTotal += b
			continue
		}
		a.add(0, d, b, own)
		cur := int32(0)
		for k := range frames {
			fid := frames[k]
			if !q.Invert {
				fid = frames[len(frames)-1-k]
			}
			cur = a.child(cur, fnOf(fid))
			a.add(cur, d, b, own)
			if known {
				c := &a.nodes[cur]
				if l := s.frameLine[fid]; l > 0 && (c.line == 0 || l < c.line) {
					c.line = l
				}
			}
		}
		a.nodes[cur].self += d
	}
	return s.materialize(a.nodes, unknownFn), hidden
}

// add counts one stack's change d and base value b on node i.
func (a *arena) add(i int32, d, b int64, own bool) {
	c := &a.nodes[i]
	c.total += d
	c.baseTotal += b
	c.absDelta += abs(d)
	if own {
		c.own = true
	} else {
		c.other = true
	}
}

// keep applies focus and ignore to one stack.
func keep(frames []int32, fnOf func(int32) int32, focus, ignore []bool) bool {
	if focus != nil {
		hit := false
		for _, f := range frames {
			if fn := fnOf(f); int(fn) < len(focus) && focus[fn] {
				hit = true
				break
			}
		}
		if !hit {
			return false
		}
	}
	if ignore != nil {
		for _, f := range frames {
			if fn := fnOf(f); int(fn) < len(ignore) && ignore[fn] {
				return false
			}
		}
	}
	return true
}

// materialize turns the arena into linked nodes, children sorted by name.
func (s *Stacks) materialize(nodes []anode, unknownFn int32) *Node {
	out := make([]Node, len(nodes))
	nkids := make([]int32, len(nodes))
	for i := 1; i < len(nodes); i++ {
		nkids[nodes[i].parent]++
	}
	slab := make([]*Node, len(nodes))
	off := 0
	for i := range nodes {
		a := &nodes[i]
		o := &out[i]
		switch {
		case i == 0:
			o.Name = RootName
		case a.fn == unknownFn:
			o.Name = unknownStack
		default:
			o.Name, o.File = s.funcs[a.fn], s.funcFiles[a.fn]
		}
		o.Line, o.Self, o.Total, o.BaseTotal, o.AbsDelta = a.line, a.self, a.total, a.baseTotal, a.absDelta
		o.Own = a.own && !a.other
		if nkids[i] > 0 {
			o.Children = slab[off : off : off+int(nkids[i])]
			off += int(nkids[i])
		}
	}
	for i := 1; i < len(nodes); i++ {
		p := &out[nodes[i].parent]
		p.Children = append(p.Children, &out[i])
	}
	for i := range out {
		if len(out[i].Children) > 1 {
			slices.SortFunc(out[i].Children, func(a, b *Node) int { return strings.Compare(a.Name, b.Name) })
		}
	}
	return &out[0]
}
