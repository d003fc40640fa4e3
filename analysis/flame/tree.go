package flame

// Node is one function at one place in the call tree.
type Node struct {
	// Name is the function name ("root" for the root).
	Name string
	// File is the function's source file, "" if unknown.
	File string
	// Line is the smallest line number seen for the function at this
	// place (0 if unknown).
	Line int64
	// Self is the value of the stacks that end here; Total is the value of
	// every stack through here. In a diff tree both are new minus base.
	Self, Total int64
	// BaseTotal is, in a diff tree, the base snapshot's total through
	// here (so the new total is Total+BaseTotal); 0 otherwise.
	BaseTotal int64
	// AbsDelta is, in a diff tree, the sum over the stacks through here of
	// the size of each stack's change, growth and shrink alike: a width
	// that shows where things changed (never less than the children's).
	AbsDelta int64
	// Own is true when every stack through here is the capture's own
	// machinery in the target (see [Own]).
	Own bool
	// Children are sorted by Name.
	Children []*Node
}

// Tree is a flame graph: the root node and what it measures.
type Tree struct {
	Root *Node
	// Profile is the profile name (schema.Profile*); Value the samples
	// column summed; Unit its unit (see [Unit]); Source where the stacks
	// came from (SourceSamples or SourceGoroutines).
	Profile, Value, Unit, Source string
	// Snapshot is the latest snapshot the values come from, First the
	// earliest (equal to Snapshot for a single snapshot).
	Snapshot, First int64
	// Count is the number of snapshots summed (1 for a single snapshot or
	// a cumulative range).
	Count int
	// Delta is true when the values are Snapshot minus First (a range of
	// a cumulative profile).
	Delta bool
	// Base is the snapshot subtracted (0: not a diff tree).
	Base int64
	// Inverted is true for a callers tree (root children are leaves).
	Inverted bool
	// Truncated is true when the table read was cut short (a writer
	// killed mid-batch): the latest snapshot may be incomplete.
	Truncated bool
	// PercentOf is the total that shares of this tree are taken of, as
	// pprof takes them: every selected sample's size before focus, ignore
	// and HideOwn (in a diff tree, the base's).
	PercentOf int64
	// OwnHidden, when the query asked to leave out the capture's own
	// machinery (Query.HideOwn), is what those stacks held; nil otherwise.
	OwnHidden *Hidden
}

// Hidden is what the stacks a query left out held: Total as the tree's
// (the change, in a diff tree) and BaseTotal the base's part.
type Hidden struct {
	Total, BaseTotal int64
}

// Total returns the root's total.
func (t *Tree) Total() int64 { return t.Root.Total }

// Diff reports whether t is a diff tree.
func (t *Tree) Diff() bool { return t.Base != 0 }

// Walk calls fn for every node, parents before children, with the node's
// depth (0 for the root). fn returning false skips the node's children.
func (t *Tree) Walk(fn func(n *Node, depth int) bool) {
	var walk func(n *Node, d int)
	walk = func(n *Node, d int) {
		if !fn(n, d) {
			return
		}
		for _, c := range n.Children {
			walk(c, d+1)
		}
	}
	walk(t.Root, 0)
}

// Prune removes, in place, every subtree whose width (the new total, and in
// a diff tree also the base total) is below minValue in absolute value, and
// returns how many nodes it removed. Self values are left as they are, so a
// widget that derives self as total minus the children's totals shows the
// pruned value on the parent. Use it to keep the JSON of a huge tree small.
func (t *Tree) Prune(minValue int64) int {
	removed := 0
	var prune func(n *Node)
	prune = func(n *Node) {
		kept := n.Children[:0]
		for _, c := range n.Children {
			if abs(c.Total+c.BaseTotal) < minValue && abs(c.BaseTotal) < minValue && c.AbsDelta < minValue {
				removed += count(c)
				continue
			}
			prune(c)
			kept = append(kept, c)
		}
		clear(n.Children[len(kept):])
		n.Children = kept
	}
	prune(t.Root)
	return removed
}

func count(n *Node) int {
	c := 1
	for _, k := range n.Children {
		c += count(k)
	}
	return c
}

// Nodes returns the number of nodes of t, the root included.
func (t *Tree) Nodes() int { return count(t.Root) }

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
