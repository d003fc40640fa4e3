package analysis

import (
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis/internal/tables"
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
func (p *population) addTrace(tg map[int64]*tables.TraceG, st *stackTable) {
	if len(tg) == 0 {
		return
	}
	p.sources = append(p.sources, "trace_goroutines")
	for goid, g := range tg {
		r := p.rec(goid)
		if r.parent == 0 {
			r.parent = g.Parent
		}
		if r.entry == "" {
			r.entry = g.StartFn
		}
		if r.creatorFn == "" && g.CreationStack != 0 {
			if fr := st.framesOf(g.CreationStack); len(fr) > 0 {
				r.creatorFn = creatorOfCreationStack(fr)
			}
		}
		if g.CreationStack != 0 && r.creation == 0 {
			r.creation, r.creationBasis = g.CreationStack, basisTrace
		}
		if g.Ended == 0 && p.aliveAt == 0 {
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
func (p *population) addEBPF(eg map[int64]*tables.EBPFG, st *stackTable) {
	if len(eg) == 0 {
		return
	}
	p.sources = append(p.sources, "ebpf_events")
	for goid, g := range eg {
		r := p.rec(goid)
		if r.parent == 0 {
			r.parent = g.Parent
		}
		if g.Stack != 0 && r.creation == 0 {
			r.creation, r.creationBasis = g.Stack, basisEBPF
		}
		if r.creatorFn == "" && g.Stack != 0 {
			if fr := st.framesOf(g.Stack); len(fr) > 0 {
				r.creatorFn = creatorOfCreationStack(fr)
			}
		}
		if g.Ended == 0 && g.Created != 0 && g.Lost == 0 && p.aliveAt == 0 {
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

// loadPopulation reads every goroutine source of the bundle.
func loadPopulation(b *bundle.Bundle, mem memory.Allocator, st *stackTable, d *dumpData) (*population, map[int64]*tables.TraceG, error) {
	p := newPopulation()
	if d != nil {
		p.addDumps(d, st)
		d.goroutine = nil // copied into p; let it go before the trace is read
	}
	tg, err := tables.ReadTraceGoroutines(b, mem)
	if err != nil {
		return nil, nil, err
	}
	p.addTrace(tg, st)
	eg, err := tables.ReadEBPFGoroutines(b, mem)
	if err != nil {
		return nil, nil, err
	}
	p.addEBPF(eg, st)
	return p, tg, nil
}

// Bases of an origin: where the creation stack that names the user's
// frame comes from.
const (
	basisTrace = "trace"      // a trace window's GoCreate stack
	basisEBPF  = "ebpf"       // an eBPF go_create stack
	basisDump  = "dump"       // a dump's one-frame "created by" line
	basisGopc  = "ebpf-gopc"  // an eBPF go_create's go-statement PC alone
	basisEntry = "creator"    // only the creator goroutine's entry function
	basisAlloc = "allocation" // a heap allocation stack
)
