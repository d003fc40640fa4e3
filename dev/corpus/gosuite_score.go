package corpus

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// SuiteOutcome is one run of one suite case, scored for leakscope (from
// the one dump) and for the runtime's goroutineleak profile (from the
// program's output), in the suite's own terms.
type SuiteOutcome struct {
	Case string
	Err  string
	// Ours and Runtime say, per expected leak (then per flaky leak, in
	// the case's order), whether the run names it.
	Ours, Runtime []bool
	// Unexpected lists leakscope's suspects that match none of the
	// case's leaks; RuntimeUnexpected the runtime's such leaks.
	Unexpected, RuntimeUnexpected []string
}

// provableGlobal is the evidence kind of a wait on a package-level
// object that no statement of the program can release: a finding the
// runtime cannot see (it treats globals as reachable), allowed on the
// suite's no-leak cases.
const provableGlobal = "no-releaser"

// ScoreSuiteRun ingests a run's dump into a bundle in dir, analyses it
// and scores both leakscope and the runtime against case c.
func ScoreSuiteRun(c SuiteCase, run SuiteRun, dir string) SuiteOutcome {
	o := SuiteOutcome{Case: c.Name}
	leaks := append(append([]*regexp.Regexp(nil), c.Expected...), c.Flaky...)
	var rt [][]string
	for _, l := range mapValues(LeakLines(run.Output, true)) {
		rt = append(rt, []string{l})
	}
	o.Runtime, o.RuntimeUnexpected = match(leaks, rt, nil)
	rep, b, err := analyseDump(c.Name, run, dir)
	if err != nil {
		o.Err = err.Error()
		return o
	}
	lines := LeakLines(run.Dump, false)
	var named [][]string
	var provable []bool
	for _, s := range rep.Suspects {
		if s.Kind != analysis.KindGoroutine {
			continue
		}
		got := suspectLines(rep, b, s, lines)
		named = append(named, got)
		provable = append(provable, hasEvidence(s, provableGlobal))
		for _, cq := range s.Consequences {
			named = append(named, pick(lines, cq.Goids))
			provable = append(provable, true) // folded: never an unexpected suspect of its own
		}
	}
	o.Ours, o.Unexpected = match(leaks, named, provable)
	return o
}

// analyseDump ingests the dump as `leakscope ingest` would and analyses
// it.
func analyseDump(name string, run SuiteRun, dir string) (*analysis.Report, *bundle.Bundle, error) {
	m := bundle.NewManifest("suite-"+name, "suite")
	body := []byte(run.Dump)
	if _, err := ingest.Reader(dir, "dump.txt", bytes.NewReader(body), bundle.Artifact{Time: run.DumpTime, Size: int64(len(body))}, ingest.Options{Manifest: m}); err != nil {
		return nil, nil, fmt.Errorf("ingest: %w", err)
	}
	b, err := bundle.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	rep, err := analysis.Analyze(b, memory.DefaultAllocator, analysis.Options{})
	return rep, b, err
}

// suspectLines are the suite lines of a suspect's members.
func suspectLines(rep *analysis.Report, b *bundle.Bundle, s analysis.Suspect, lines map[int64]string) []string {
	sel, err := rep.Select(b, memory.DefaultAllocator, s.ID)
	if err != nil || len(sel.Goids) == 0 {
		return pick(lines, s.Goids)
	}
	return pick(lines, sel.Goids)
}

// pick returns the distinct lines of the given goroutines.
func pick(lines map[int64]string, goids []int64) []string {
	var out []string
	for _, g := range goids {
		if l, ok := lines[g]; ok && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

func mapValues(m map[int64]string) []string {
	var out []string
	for _, v := range m {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// match says which leaks the named groups name, and lists the groups
// that match none (unless allowed).
func match(leaks []*regexp.Regexp, named [][]string, allowed []bool) ([]bool, []string) {
	hit := make([]bool, len(leaks))
	var unexpected []string
	for gi, group := range named {
		matched := false
		for _, line := range group {
			for i, re := range leaks {
				if re.MatchString(line) {
					hit[i], matched = true, true
				}
			}
		}
		if !matched && len(group) > 0 && (allowed == nil || !allowed[gi]) {
			unexpected = append(unexpected, strings.Join(group, " | "))
		}
	}
	return hit, unexpected
}

// hasEvidence reports a suspect with evidence of the kind.
func hasEvidence(s analysis.Suspect, kind string) bool {
	for _, e := range s.Evidence {
		if e.Kind == kind {
			return true
		}
	}
	return false
}
