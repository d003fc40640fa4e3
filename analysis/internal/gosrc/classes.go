package gosrc

import (
	"go/token"
	"go/types"
	"slices"
)

// node is a storage location or object of the abstract heap; unified
// nodes form a class (union-find).
type node = int32

// none is no node.
const none node = -1

// cflag is what a class of objects is known to be or to have met.
type cflag uint16

const (
	fGlobal  cflag = 1 << iota // a package-level variable's storage
	fField                     // a struct field's storage (every instance)
	fElem                      // a container's or channel's element
	fOpaque                    // passed to, or made by, code whose body is not read
	fTimer                     // a timer's or ticker's channel, or a context with a deadline
	fSignal                    // a channel signal.Notify sends on
	fCancel                    // a context's cancel function
	fCtxRoot                   // context.Background or TODO: never cancelled
)

// Alloc is where objects of a class are made.
type Alloc struct {
	Func *Func
	Pos  token.Pos
	Kind string // "chan", "map", "slice", "new", "composite", "var"
}

// cinfo is what a class holds, kept at its root.
type cinfo struct {
	pts, elem node // what its values point to; its elements (or a context's done channel)
	flags     cflag
	allocs    []Alloc
	funcs     []*Func       // function values of the class
	decls     []*types.Func // function values declared without a body read
	// dyn are the dynamic types of interface values in it, and sent,
	// for a channel's element, the types of the values sent on it: each
	// once, all of them (dispatch and reach walks must see every one).
	dyn, sent []types.Type
	vars      []*types.Var // named storage in it, for texts
	parents   []node       // contexts it derives from
	cancels   []node       // contexts its cancel functions cancel
}

// Caps on what a class lists for texts.
const (
	maxAllocs = 8
	maxVars   = 8
)

// classes is the union-find over nodes.
type classes struct {
	parent []node
	rank   []uint8
	info   []*cinfo
	// frozen is set once the unification is done: every node points to
	// its root, and lookups no longer write (a Program is read by
	// several analyses at once).
	frozen bool
}

// emptyInfo is the info of a class that has none, once frozen.
var emptyInfo = &cinfo{pts: none, elem: none}

// freeze points every node at its root and stops all writes.
func (c *classes) freeze() {
	for n := range c.parent {
		c.parent[n] = c.find(node(n))
	}
	c.frozen = true
}

// newNode returns a fresh class.
func (c *classes) newNode() node {
	n := node(len(c.parent))
	c.parent = append(c.parent, n)
	c.rank = append(c.rank, 0)
	c.info = append(c.info, nil)
	return n
}

// find returns n's class (its root), halving paths.
func (c *classes) find(n node) node {
	if c.frozen {
		return c.parent[n]
	}
	for c.parent[n] != n {
		c.parent[n] = c.parent[c.parent[n]]
		n = c.parent[n]
	}
	return n
}

// data returns the info of n's class, made on first use.
func (c *classes) data(n node) *cinfo {
	r := c.find(n)
	if c.info[r] == nil {
		if c.frozen {
			return emptyInfo
		}
		c.info[r] = &cinfo{pts: none, elem: none}
	}
	return c.info[r]
}

// pts returns the class n's values point to, made on first use.
func (c *classes) pts(n node) node {
	if n == none {
		return none
	}
	d := c.data(n)
	if d.pts == none {
		if c.frozen {
			return none
		}
		p := c.newNode()
		d = c.data(n) // the slices may have grown
		d.pts = p
	}
	return c.find(d.pts)
}

// elem returns n's element class, made on first use.
func (c *classes) elem(n node) node {
	if n == none {
		return none
	}
	d := c.data(n)
	if d.elem == none {
		if c.frozen {
			return none
		}
		e := c.newNode()
		d = c.data(n)
		d.elem = e
		c.data(e).flags |= fElem
	}
	return c.find(d.elem)
}

// join unifies the classes of a and b, and what their values point to
// and their elements, recursively (Steensgaard).
func (c *classes) join(a, b node) {
	if a == none || b == none {
		return
	}
	work := [][2]node{{a, b}}
	for len(work) > 0 {
		x, y := c.find(work[len(work)-1][0]), c.find(work[len(work)-1][1])
		work = work[:len(work)-1]
		if x == y {
			continue
		}
		if c.rank[x] < c.rank[y] {
			x, y = y, x
		} else if c.rank[x] == c.rank[y] {
			c.rank[x]++
		}
		dx, dy := c.info[x], c.info[y]
		c.parent[y] = x
		if dy == nil {
			continue
		}
		if dx == nil {
			c.info[x], c.info[y] = dy, nil
			continue
		}
		c.info[y] = nil
		work = merge(dx, dy, work)
	}
}

// merge moves dy into dx and returns the pairs left to unify.
func merge(dx, dy *cinfo, work [][2]node) [][2]node {
	dx.flags |= dy.flags
	dx.allocs = capAppend(dx.allocs, dy.allocs, maxAllocs)
	dx.funcs = appendNew(dx.funcs, dy.funcs)
	dx.decls = appendNew(dx.decls, dy.decls)
	dx.dyn = appendTypes(dx.dyn, dy.dyn)
	dx.sent = appendTypes(dx.sent, dy.sent)
	dx.vars = capAppend(dx.vars, dy.vars, maxVars)
	dx.parents = append(dx.parents, dy.parents...)
	dx.cancels = append(dx.cancels, dy.cancels...)
	for _, p := range [][2]*node{{&dx.pts, &dy.pts}, {&dx.elem, &dy.elem}} {
		switch {
		case *p[1] == none:
		case *p[0] == none:
			*p[0] = *p[1]
		default:
			work = append(work, [2]node{*p[0], *p[1]})
		}
	}
	return work
}

// appendTypes adds to dst the types of src it does not hold.
func appendTypes(dst, src []types.Type) []types.Type {
	for _, t := range src {
		if !slices.ContainsFunc(dst, func(u types.Type) bool { return types.Identical(u, t) }) {
			dst = append(dst, t)
		}
	}
	return dst
}

func capAppend[T any](dst, src []T, n int) []T {
	for _, v := range src {
		if len(dst) >= n {
			break
		}
		dst = append(dst, v)
	}
	return dst
}

func appendNew[T comparable](dst, src []T) []T {
	for _, v := range src {
		found := false
		for _, w := range dst {
			if w == v {
				found = true
				break
			}
		}
		if !found {
			dst = append(dst, v)
		}
	}
	return dst
}
