package analysis

import (
	"context"
	"sort"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// Analyze reads the bundle and returns its leak report. It is
// [AnalyzeContext] with a context that is never cancelled.
func Analyze(b *bundle.Bundle, mem memory.Allocator, opts Options) (*Report, error) {
	return analyze(context.Background(), b, mem, opts)
}

// AnalyzeContext reads the bundle and returns its leak report, or a
// [*CutError] once ctx is done, the analysis has run past
// [Options.Timeout] or its heap has grown past [Options.MaxHeap] (checked
// before each stage of the pipeline and between the tables it reads).
func AnalyzeContext(ctx context.Context, b *bundle.Bundle, mem memory.Allocator, opts Options) (*Report, error) {
	return analyze(ctx, b, mem, opts)
}

// Ancestry returns the goroutine creation tree of the bundle, merged from
// dumps ("created by … in goroutine N"), traces and eBPF events.
func Ancestry(b *bundle.Bundle, mem memory.Allocator) (*AncestryTree, error) {
	return ancestry(b, mem)
}

// Lifetimes returns goroutine and span lifetimes overlapping [from, to]
// (zero times mean the bundle's range), downsampled to at most limit bars
// (0 means 2000). Spans never ended and goroutines still alive are kept
// first.
func Lifetimes(b *bundle.Bundle, mem memory.Allocator, from, to time.Time, limit int) (*LifetimeView, error) {
	return lifetimes(b, mem, from, to, limit)
}

// FitPoints fits a least-squares line through a series, as the report's
// growth figures are fitted: slope per minute, R² and the share of steps
// that do not go down. The node agent's growth rule uses it.
func FitPoints(ps []Point) Fit {
	ts := make([]int64, len(ps))
	v := make([]float64, len(ps))
	for i, p := range ps {
		ts[i], v[i] = p.TS.UnixNano(), p.Value
	}
	return fitSeries(ts, v)
}

// Members places a suspect's selected goroutines in the tree: how many are
// alive at the tree's AliveAt and on which nodes, most members first.
func (t *AncestryTree) Members(sel Selection) AncestryMembers {
	out := AncestryMembers{ID: sel.ID, AliveAt: t.AliveAt, Nodes: []AncestryMember{}}
	by := map[*AncestryNode]int64{}
	for _, g := range sel.Goids {
		if !t.alive[g] {
			continue
		}
		out.Alive++
		if n := t.nodeOf[g]; n != nil {
			by[n]++
		}
	}
	for n, c := range by {
		out.Nodes = append(out.Nodes, AncestryMember{Node: n.ID, Function: n.Function, CreatedBy: n.CreatedBy, Members: c})
	}
	sort.Slice(out.Nodes, func(i, j int) bool {
		a, b := out.Nodes[i], out.Nodes[j]
		if a.Members != b.Members {
			return a.Members > b.Members
		}
		return a.Node < b.Node
	})
	return out
}

// analyze runs the pipeline: load → evidence → verdicts → report
// assembly (attribution happens per reported suspect during assembly).
// See doc.go for the map of the stages. Each stage starts only while the
// analysis is within its deadline and heap budget (see budget.go); load
// checks them between tables too.
func analyze(ctx context.Context, b *bundle.Bundle, mem memory.Allocator, opts Options) (*Report, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	bg, stop := startBudget(ctx, cfg.timeout, cfg.maxHeap)
	defer stop()
	var (
		in  *loaded
		ev  *evidence
		v   *verdicts
		rep *Report
	)
	stages := []struct {
		name string
		run  func() error
	}{
		{"load", func() (err error) {
			in, err = load(b, mem, cfg.userCode, extraSource{code: opts.Source, calls: opts.SourceCalls}, bg)
			return err
		}},
		{"evidence", func() error { ev = gatherEvidence(in, cfg.rules); return nil }},
		{"verdicts", func() error { v = judge(in, ev, cfg.minScore); return nil }},
		{"assembly", func() error {
			rep = assemble(in, v, cfg)
			rep.Source = sourceCoverage(in, ev.wait, rep)
			return nil
		}},
	}
	for _, st := range stages {
		if err := bg.check(st.name); err != nil {
			return nil, err
		}
		if err := st.run(); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

func newConfig(opts Options) (config, error) {
	c := config{rules: opts.Rules, minScore: opts.MinScore, maxGoids: opts.MaxGoids, now: opts.Now, userCode: opts.UserCode}
	if c.rules == nil {
		var err error
		if c.rules, err = LoadRules(""); err != nil {
			return c, err
		}
	}
	if c.minScore == 0 {
		c.minScore = DefaultMinScore
	}
	if c.maxGoids <= 0 {
		c.maxGoids = 20
	}
	c.timeout, c.maxHeap = opts.Timeout, opts.MaxHeap
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.maxHeap == 0 {
		c.maxHeap = DefaultMaxHeap
	}
	return c, nil
}
