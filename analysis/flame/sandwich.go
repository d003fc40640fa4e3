package flame

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrNoFunction is wrapped by [Sandwich]'s error when the function is not
// in the tree.
var ErrNoFunction = errors.New("function not in tree")

// Sandwich returns the callers and callees of one function (exact name) of
// a tree built without Invert. callees is rooted at the function and merges
// everything below each of its outermost occurrences (recursive calls stay
// inside); callers is rooted at the function too, and its children are the
// function's callers, theirs the callers' callers, up to the stack roots
// (an inverted tree). Both roots' totals equal the function's cum in
// [Top]. The trees share t's metadata; callers has Inverted set.
func Sandwich(t *Tree, function string) (callers, callees *Tree, err error) {
	if t.Inverted {
		return nil, nil, fmt.Errorf("sandwich of %s: needs a tree built without invert", function)
	}
	ce := &Node{Name: function, Own: true}
	cr := &Node{Name: function, Own: true}
	cem, crm := merger{}, merger{}
	found := false
	var path []*Node
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.Name == function && len(path) > 0 {
			found = true
			if ce.File == "" {
				ce.File, cr.File = n.File, n.File
			}
			cem.merge(ce, n)
			cr.addFrom(n)
			cur := cr
			for i := len(path) - 1; i >= 1; i-- {
				cur = crm.child(cur, path[i])
				cur.addFrom(n)
			}
			cur.Self += n.Total
			return // outermost occurrence: its subtree is merged whole
		}
		path = append(path, n)
		for _, c := range n.Children {
			walk(c)
		}
		path = path[:len(path)-1]
	}
	walk(t.Root)
	if !found {
		return nil, nil, fmt.Errorf("sandwich of %s: %w", function, ErrNoFunction)
	}
	sortTree(ce)
	sortTree(cr)
	callers, callees = new(Tree), new(Tree)
	*callers, *callees = *t, *t
	callers.Root, callers.Inverted = cr, true
	callees.Root = ce
	return callers, callees, nil
}

// merger adds nodes into trees, finding children by name.
type merger map[mkey]*Node

type mkey struct {
	parent *Node
	name   string
}

// child returns dst's child named like src, creating it (with src's file
// and line) if needed.
func (m merger) child(dst, src *Node) *Node {
	k := mkey{dst, src.Name}
	c := m[k]
	if c == nil {
		c = &Node{Name: src.Name, File: src.File, Line: src.Line, Own: true}
		m[k] = c
		dst.Children = append(dst.Children, c)
	} else if src.Line > 0 && (c.Line == 0 || src.Line < c.Line) {
		c.Line = src.Line
	}
	return c
}

// addFrom adds the totals of src (not its self value) to n.
func (n *Node) addFrom(src *Node) {
	n.Total += src.Total
	n.BaseTotal += src.BaseTotal
	n.AbsDelta += src.AbsDelta
	n.Own = n.Own && src.Own
}

// merge adds src's values and subtree into dst.
func (m merger) merge(dst, src *Node) {
	dst.Self += src.Self
	dst.addFrom(src)
	if src.Line > 0 && (dst.Line == 0 || src.Line < dst.Line) {
		dst.Line = src.Line
	}
	for _, c := range src.Children {
		m.merge(m.child(dst, c), c)
	}
}

func sortTree(n *Node) {
	slices.SortFunc(n.Children, func(a, b *Node) int { return strings.Compare(a.Name, b.Name) })
	for _, c := range n.Children {
		sortTree(c)
	}
}
