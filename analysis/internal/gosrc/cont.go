package gosrc

import (
	"go/ast"
	"go/token"
	"sort"

	"golang.org/x/tools/go/cfg"
)

// funcGraph is a function's control-flow graph (golang.org/x/tools/go/cfg)
// with every node of its live blocks, for finding where a frame is.
type funcGraph struct {
	g      *cfg.CFG
	nodes  []cfgNode
	defers []cfgNode // the defer statements
	events [][]event // by block
	// fresh holds, for each fresh local f operates on (fresh.go), its
	// definitions and operations by block, in the variables' order.
	fresh []freshBlocks
}

// cfgNode is one node of a live block and its place.
type cfgNode struct {
	block              int32
	idx                int
	pos, end           token.Pos
	startLine, endLine int
}

// posRange is a span of a body.
type posRange struct{ pos, end token.Pos }

// graph returns f's control-flow graph with its events by block and
// its fresh locals, built once (under the Program's lock: analyses
// share a Program).
func (p *Program) graph(f *Func) *funcGraph {
	p.lazy.Lock()
	defer p.lazy.Unlock()
	if f.graph != nil {
		return f.graph
	}
	g := cfg.New(f.body(), mayReturn)
	fg := &funcGraph{g: g}
	for _, b := range g.Blocks {
		if !b.Live {
			continue
		}
		for i, n := range b.Nodes {
			cn := cfgNode{block: b.Index, idx: i, pos: n.Pos(), end: n.End(),
				startLine: p.fset.Position(n.Pos()).Line, endLine: p.fset.Position(n.End()).Line}
			fg.nodes = append(fg.nodes, cn)
			if _, ok := n.(*ast.DeferStmt); ok {
				fg.defers = append(fg.defers, cn)
			}
		}
	}
	fg.events = make([][]event, len(g.Blocks))
	for _, n := range fg.nodes {
		fg.events[n.block] = append(fg.events[n.block], eventsIn(f, []posRange{{n.pos, n.end}})...)
	}
	fg.rangeEvents(f)
	f.fresh = freshVars(f)
	fg.fresh = fg.freshItems(f)
	f.graph = fg
	return fg
}

// rangeEvents places the events a range statement's header makes at its
// "for", which lie in none of its nodes (go/cfg adds only its X, Key and
// Value, to the block before the loop): a receive from a channel comes
// on every turn, so in the loop's own block; a call of a function
// ranged over comes once, beside X.
func (fg *funcGraph) rangeEvents(f *Func) {
	for _, b := range fg.g.Blocks {
		s, ok := b.Stmt.(*ast.RangeStmt)
		if !ok || !b.Live || b.Kind != cfg.KindRangeLoop {
			continue
		}
		for _, e := range eventsIn(f, []posRange{{s.For, s.For + 1}}) {
			at := b.Index
			if e.call != nil {
				at = fg.blockOf(s.X)
			}
			if at >= 0 {
				fg.events[at] = append(fg.events[at], e)
				sort.SliceStable(fg.events[at], func(i, j int) bool { return fg.events[at][i].pos < fg.events[at][j].pos })
			}
		}
	}
}

// blockOf is the block of the node n is, -1 when none.
func (fg *funcGraph) blockOf(n ast.Node) int32 {
	for _, c := range fg.nodes {
		if c.pos == n.Pos() && c.end == n.End() {
			return c.block
		}
	}
	return -1
}

// mayReturn reports whether a call can return: panic cannot.
func mayReturn(c *ast.CallExpr) bool {
	id, ok := ast.Unparen(c.Fun).(*ast.Ident)
	return !ok || id.Name != "panic"
}

// nodeAt is the node a frame of f at line is at: the innermost one
// spanning the line (of two apart on one line, the first: the rest from
// it holds the other's), else the first one after it; -1 when none (the
// function is returning).
func (fg *funcGraph) nodeAt(line int) int {
	at := -1
	for i, n := range fg.nodes {
		switch {
		case n.startLine <= line && line <= n.endLine:
			if at < 0 || fg.nodes[at].startLine > line || fg.nodes[at].spanning(n) {
				at = i
			}
		case n.startLine > line && (at < 0 || fg.nodes[at].startLine > line && n.pos < fg.nodes[at].pos):
			at = i
		}
	}
	return at
}

// spanning reports that n should stand for a line instead of m, both
// spanning it: n lies inside m, or before it, apart.
func (m cfgNode) spanning(n cfgNode) bool {
	inside := n.pos >= m.pos && n.end <= m.end && n.end-n.pos < m.end-m.pos
	return inside || n.end <= m.pos
}

// startsAt is where the rest of a frame of f at line begins, and the
// blocks that rest reaches (its own included).
func (p *Program) startsAt(f *Func, line int) ([]start, []int32) {
	fg := p.graph(f)
	at := fg.nodeAt(line)
	if at < 0 {
		return nil, nil
	}
	n := fg.nodes[at]
	b := fg.g.Blocks[n.block]
	evs := p.blockEvents(f)[n.block]
	idx := sort.Search(len(evs), func(i int) bool { return evs[i].pos >= n.pos })
	reached := []int32{b.Index}
	seen := map[int32]bool{b.Index: true}
	work := append([]*cfg.Block(nil), b.Succs...)
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		if seen[x.Index] {
			continue
		}
		seen[x.Index] = true
		reached = append(reached, x.Index)
		work = append(work, x.Succs...)
	}
	return []start{{block: b, idx: idx, pos: n.pos}}, reached
}

// pendingDefers are the events of the defer statements a frame has run
// already: those in blocks its rest does not reach, or before its start
// in its own block. They run when the function returns.
func (p *Program) pendingDefers(f *Func, reached []int32, starts []start) []event {
	fg := p.graph(f)
	in := map[int32]bool{}
	for _, b := range reached {
		in[b] = true
	}
	var out []event
	for _, d := range fg.defers {
		before := len(starts) > 0 && d.block == starts[0].block.Index && !p.loopsBack(starts[0].block) &&
			d.end <= p.startPos(f, starts[0])
		if !in[d.block] || before {
			out = append(out, eventsIn(f, []posRange{{d.pos, d.end}})...)
		}
	}
	return out
}

// startPos is the position a start begins at.
func (p *Program) startPos(f *Func, s start) token.Pos {
	evs := p.blockEvents(f)[s.block.Index]
	if s.idx < len(evs) {
		return evs[s.idx].pos
	}
	return token.Pos(1 << 30)
}

// loopsBack reports a block its own successors reach again.
func (p *Program) loopsBack(b *cfg.Block) bool {
	seen := map[int32]bool{}
	work := append([]*cfg.Block(nil), b.Succs...)
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		if x == b {
			return true
		}
		if seen[x.Index] {
			continue
		}
		seen[x.Index] = true
		work = append(work, x.Succs...)
	}
	return false
}

// withFilter runs fn with the walks taking only the events keep accepts.
func (q *Query) withFilter(keep func(event) bool, fn func()) {
	saved := q.keep
	q.keep = keep
	defer func() { q.keep = saved }()
	fn()
}

// kept reports whether the walks take event e.
func (q *Query) kept(e event) bool { return q.keep == nil || q.keep(e) }

// eventsIn returns f's events inside the spans.
func eventsIn(f *Func, spans []posRange) []event {
	var out []event
	for _, s := range spans {
		i := sort.Search(len(f.events), func(i int) bool { return f.events[i].pos >= s.pos })
		for ; i < len(f.events) && f.events[i].pos < s.end; i++ {
			out = append(out, f.events[i])
		}
	}
	return out
}
