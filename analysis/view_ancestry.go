package analysis

import (
	"sort"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// ancRec is one goroutine as the creation tree sees it.
type ancRec struct {
	parent    int64
	entry     string
	creatorFn string
	alive     bool
	// creation is the stack of the go statement that created it, from a
	// trace's GoCreate or an eBPF go_create event (leaf first; 0 when
	// unknown), and creationBasis which of them; createdBy the dump's
	// one-frame "created by" stack.
	creation      int64
	creationBasis string
	createdBy     int64
}

// population merges goroutines from dumps, traces and eBPF by goid.
type population struct {
	recs    map[int64]*ancRec
	sources []string
	// aliveAt is the snapshot "alive" refers to: the last dump when there
	// are dumps (a dump lists every goroutine, so one not in it was not
	// alive then), else the end of the traces and eBPF events (0).
	aliveAt int64
}

func newPopulation() *population {
	return &population{recs: map[int64]*ancRec{}}
}

func (p *population) rec(goid int64) *ancRec {
	r := p.recs[goid]
	if r == nil {
		r = &ancRec{}
		p.recs[goid] = r
	}
	return r
}

// addDumps adds the goroutines of dump snapshots; those in the last
// snapshot are alive.
func (p *population) addDumps(d *dumpData, st *stackTable) {
	if len(d.goroutine) == 0 {
		return
	}
	p.sources = append(p.sources, "goroutines")
	lastTS := d.snapshots[len(d.snapshots)-1]
	p.aliveAt = lastTS
	entries := map[int64]string{}
	for goid, g := range d.goroutine {
		e, ok := entries[g.stackID]
		if !ok {
			e = entryFunction(st.framesOf(g.stackID))
			entries[g.stackID] = e
		}
		r := p.rec(goid)
		if r.parent == 0 {
			r.parent = g.creator
		}
		r.entry, r.creatorFn = e, g.creatorFn
		if r.createdBy == 0 {
			r.createdBy = g.creatorStack
		}
		r.alive = r.alive || g.lastTS == lastTS
	}
}

// addTrace adds trace goroutines.
func (p *population) addTrace(tg map[int64]*traceG, st *stackTable) {
	if len(tg) == 0 {
		return
	}
	p.sources = append(p.sources, "trace_goroutines")
	for goid, g := range tg {
		r := p.rec(goid)
		if r.parent == 0 {
			r.parent = g.parent
		}
		if r.entry == "" {
			r.entry = g.startFn
		}
		if r.creatorFn == "" && g.creationStack != 0 {
			if fr := st.framesOf(g.creationStack); len(fr) > 0 {
				r.creatorFn = creatorOfCreationStack(fr)
			}
		}
		if g.creationStack != 0 && r.creation == 0 {
			r.creation, r.creationBasis = g.creationStack, basisTrace
		}
		if g.ended == 0 && p.aliveAt == 0 {
			r.alive = true
		}
	}
}

// creatorOfCreationStack returns the function holding the go statement
// from a creation stack (leaf first), skipping runtime frames.
func creatorOfCreationStack(fr []Frame) string {
	for _, f := range fr {
		if !isRuntime(f.Function) {
			return f.Function
		}
	}
	return fr[0].Function
}

// addEBPF adds goroutines seen by eBPF probes; a goroutine no dump or
// trace names takes its creator from the go statement eBPF saw. Without
// dumps, one seen created and not exit is alive when the probes stayed
// attached from its creation to the end.
func (p *population) addEBPF(eg map[int64]*ebpfG, st *stackTable) {
	if len(eg) == 0 {
		return
	}
	p.sources = append(p.sources, "ebpf_events")
	for goid, g := range eg {
		r := p.rec(goid)
		if r.parent == 0 {
			r.parent = g.parent
		}
		if g.stack != 0 && r.creation == 0 {
			r.creation, r.creationBasis = g.stack, basisEBPF
		}
		if r.creatorFn == "" && g.stack != 0 {
			if fr := st.framesOf(g.stack); len(fr) > 0 {
				r.creatorFn = creatorOfCreationStack(fr)
			}
		}
		if g.ended == 0 && g.created != 0 && g.lost == 0 && p.aliveAt == 0 {
			r.alive = true
		}
	}
}

func topKey(m map[string]int64) string {
	best, bn := "", int64(-1)
	for k, n := range m {
		if n > bn || n == bn && k < best {
			best, bn = k, n
		}
	}
	return best
}

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

// loadPopulation reads every goroutine source of the bundle.
func loadPopulation(b *bundle.Bundle, mem memory.Allocator, st *stackTable, d *dumpData) (*population, map[int64]*traceG, error) {
	p := newPopulation()
	if d != nil {
		p.addDumps(d, st)
		d.goroutine = nil // copied into p; let it go before the trace is read
	}
	tg, err := readTraceGoroutines(b, mem)
	if err != nil {
		return nil, nil, err
	}
	p.addTrace(tg, st)
	eg, err := readEBPFGoroutines(b, mem)
	if err != nil {
		return nil, nil, err
	}
	p.addEBPF(eg, st)
	return p, tg, nil
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
