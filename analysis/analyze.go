package analysis

import (
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// analyze runs the pipeline: load → evidence → verdicts → report
// assembly (attribution happens per reported suspect during assembly).
// See doc.go for the map of the stages.
func analyze(b *bundle.Bundle, mem memory.Allocator, opts Options) (*Report, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	in, err := load(b, mem, cfg.userCode, extraSource{code: opts.Source, calls: opts.SourceCalls})
	if err != nil {
		return nil, err
	}
	ev := gatherEvidence(in, cfg.rules)
	v := judge(in, ev, cfg.minScore)
	rep := assemble(in, v, cfg)
	rep.Source = sourceCoverage(in, ev.wait, rep)
	return rep, nil
}

// config is [Options] with the defaults filled in.
type config struct {
	rules    []Rule
	minScore float64
	maxGoids int
	now      time.Time
	userCode []string
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
	return c, nil
}
