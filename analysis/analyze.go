package analysis

import (
	"context"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

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
