package corpus

import (
	"fmt"
	"sort"
	"strings"
)

// SuiteTab sums up the suite's runs.
type SuiteTab struct {
	// Expected leaks (non-flaky): how many, how many leakscope and the
	// runtime named in every run, and the leak-runs each named of all.
	Expected, ExpectedEveryOurs, ExpectedEveryRuntime int
	ExpectedRuns, ExpectedRunsOurs, ExpectedRunsRuntime  int
	// Flaky leaks: the leak-runs each named of all.
	FlakyRuns, FlakyOurs, FlakyRuntime int
	// NoLeak cases and how many runs of them got no suspect.
	NoLeakRuns, NoLeakSilentOurs, NoLeakSilentRuntime int
	// Unexpected: suspects matching none of their case's leaks.
	UnexpectedOurs, UnexpectedRuntime int
	Runs, Errors                      int

	details, problems []string
}

// SuiteTable sums up the scored runs of each case.
func SuiteTable(cases []SuiteCase, runs map[string][]SuiteOutcome) *SuiteTab {
	t := &SuiteTab{}
	for _, c := range cases {
		t.addCase(c, runs[c.Name])
	}
	return t
}

// addCase adds one case's runs.
func (t *SuiteTab) addCase(c SuiteCase, rs []SuiteOutcome) {
	var ok []SuiteOutcome
	for _, r := range rs {
		t.Runs++
		if r.Err != "" {
			t.Errors++
			t.problems = append(t.problems, fmt.Sprintf("%s: %s", c.Name, r.Err))
			continue
		}
		ok = append(ok, r)
		t.UnexpectedOurs += len(r.Unexpected)
		t.UnexpectedRuntime += len(r.RuntimeUnexpected)
		for _, u := range r.Unexpected {
			t.problems = append(t.problems, fmt.Sprintf("%s: a suspect matches none of its leaks: %s", c.Name, u))
		}
		if len(c.Expected)+len(c.Flaky) == 0 {
			t.NoLeakRuns++
			if len(r.Unexpected) == 0 {
				t.NoLeakSilentOurs++
			}
			if len(r.RuntimeUnexpected) == 0 {
				t.NoLeakSilentRuntime++
			}
		}
	}
	var line []string
	for i, re := range c.Expected {
		ours, rt := named(ok, i)
		t.Expected++
		t.ExpectedRuns += len(ok)
		t.ExpectedRunsOurs += ours
		t.ExpectedRunsRuntime += rt
		if ours == len(ok) {
			t.ExpectedEveryOurs++
		} else {
			t.problems = append(t.problems, fmt.Sprintf("%s: leak %s named in %d of %d runs", c.Name, re, ours, len(ok)))
		}
		if rt == len(ok) {
			t.ExpectedEveryRuntime++
		}
		line = append(line, fmt.Sprintf("%s %d/%d (runtime %d)", re, ours, len(ok), rt))
	}
	for j, re := range c.Flaky {
		ours, rt := named(ok, len(c.Expected)+j)
		t.FlakyRuns += len(ok)
		t.FlakyOurs += ours
		t.FlakyRuntime += rt
		if ours < rt {
			t.problems = append(t.problems, fmt.Sprintf("%s: flaky leak %s named in %d runs, the runtime's profile in %d", c.Name, re, ours, rt))
		}
		line = append(line, fmt.Sprintf("flaky %s %d/%d (runtime %d)", re, ours, len(ok), rt))
	}
	t.details = append(t.details, fmt.Sprintf("%s (%d runs): %s", c.Name, len(rs), strings.Join(line, "; ")))
}

// named counts the runs whose leakscope and runtime results name leak i.
func named(rs []SuiteOutcome, i int) (ours, rt int) {
	for _, r := range rs {
		if i < len(r.Ours) && r.Ours[i] {
			ours++
		}
		if i < len(r.Runtime) && r.Runtime[i] {
			rt++
		}
	}
	return ours, rt
}

// Problems lists what fails the suite's bar.
func (t *SuiteTab) Problems() []string {
	out := append([]string(nil), t.problems...)
	if t.FlakyOurs < t.FlakyRuntime {
		out = append(out, fmt.Sprintf("flaky leaks named in %d runs, the runtime's profile %d", t.FlakyOurs, t.FlakyRuntime))
	}
	sort.Strings(out)
	return out
}

// Details lists each case's leaks with how often each named them.
func (t *SuiteTab) Details() string { return strings.Join(t.details, "\n") }

// Markdown is the summary table.
func (t *SuiteTab) Markdown() string {
	var b strings.Builder
	b.WriteString("| measure | leakscope, one dump without the runtime's marks | the runtime's goroutineleak profile, same runs |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| non-flaky leaks named in every run | %d/%d | %d/%d |\n", t.ExpectedEveryOurs, t.Expected, t.ExpectedEveryRuntime, t.Expected)
	fmt.Fprintf(&b, "| non-flaky leak-runs named | %d/%d | %d/%d |\n", t.ExpectedRunsOurs, t.ExpectedRuns, t.ExpectedRunsRuntime, t.ExpectedRuns)
	fmt.Fprintf(&b, "| flaky leak-runs named | %d/%d | %d/%d |\n", t.FlakyOurs, t.FlakyRuns, t.FlakyRuntime, t.FlakyRuns)
	fmt.Fprintf(&b, "| no-leak runs without a suspect | %d/%d | %d/%d |\n", t.NoLeakSilentOurs, t.NoLeakRuns, t.NoLeakSilentRuntime, t.NoLeakRuns)
	fmt.Fprintf(&b, "| suspects matching no leak of their case | %d | %d |\n", t.UnexpectedOurs, t.UnexpectedRuntime)
	fmt.Fprintf(&b, "| runs (failed) | %d (%d) | |\n", t.Runs, t.Errors)
	return b.String()
}
