package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/leakscope/leakscope/internal/format"
)

const maxMissingListed = 10

// sourceCoverage sums up, over the goroutine sites, which functions the
// kept source could be read for, and what that cost: the undecided waits
// of the wait-for graph and the reported suspects without their
// statement. It adds a warning when anything was missing.
func sourceCoverage(in *loaded, w *waitGraph, rep *Report) *SourceCoverage {
	c := &SourceCoverage{}
	why := map[[2]string]string{}
	for _, s := range in.sites {
		f := s.loc
		if f.File == "" || isStd(f) {
			continue
		}
		k := [2]string{f.File, f.Function}
		p, reason := in.src.funcAt(f)
		if old, seen := why[k]; seen && (old == "" || p == nil) {
			continue
		}
		why[k] = reason
	}
	for k, reason := range why {
		c.Functions++
		if reason == "" {
			c.Kept++
			continue
		}
		c.MissingCount++
		c.Missing = append(c.Missing, MissingSource{Function: k[1], File: k[0], Why: reason})
	}
	sort.Slice(c.Missing, func(i, j int) bool {
		if c.Missing[i].Function != c.Missing[j].Function {
			return c.Missing[i].Function < c.Missing[j].Function
		}
		return c.Missing[i].File < c.Missing[j].File
	})
	c.Missing = c.Missing[:min(len(c.Missing), maxMissingListed)]
	groups := map[*site]int{}
	for _, x := range w.gs {
		if x.undecided && x.site != nil {
			groups[x.site]++
			c.UndecidedGoroutines++
		}
	}
	c.UndecidedGroups = len(groups)
	for _, s := range rep.Suspects {
		if s.Location != "" && !isStd(Frame{Function: s.Location, File: s.File}) && (s.Source == nil || s.Source.Status != SourceOK) {
			c.SuspectsWithoutSource++
		}
	}
	if c.MissingCount > 0 || c.UndecidedGroups > 0 {
		rep.Warnings = append(rep.Warnings, c.warning())
	}
	rep.LookAlikes = append(rep.LookAlikes, undecidedLookAlikes(in, groups)...)
	return c
}

// warning says what was missing and what it cost.
func (c *SourceCoverage) warning() string {
	var names []string
	for _, m := range c.Missing {
		names = append(names, fmt.Sprintf("%s in %s: %s", m.Function, m.File, m.Why))
	}
	if more := c.MissingCount - len(c.Missing); more > 0 {
		names = append(names, fmt.Sprintf("and %d more", more))
	}
	part := "found only in part"
	if c.Kept == 0 {
		part = "missing"
	}
	w := fmt.Sprintf("source %s: %d of %d functions the goroutines wait in have no readable statement at their line (%s)",
		part, c.MissingCount, c.Functions, strings.Join(names, "; "))
	if c.UndecidedGroups > 0 {
		w += fmt.Sprintf("; cost: %s (%s) in a select or receive taken as able to run, since without the statement a timer case cannot be ruled out: no stuck verdict for them, and they count as goroutines that may wake others",
			format.Count(float64(c.UndecidedGroups), "parked group"), format.Count(float64(c.UndecidedGoroutines), "goroutine"))
	}
	if c.SuspectsWithoutSource > 0 {
		w += fmt.Sprintf("; %s named from frames alone (no ticker or stopped timer pattern)", format.Count(float64(c.SuspectsWithoutSource), "suspect"))
	}
	return w + ". Give the checkout or module cache (leakscope report --source-root DIR, or ingest --source-root DIR) to judge them."
}

// undecidedLookAlikes lists the undecided groups with what their source
// would add, most goroutines first.
func undecidedLookAlikes(in *loaded, groups map[*site]int) []LookAlike {
	var out []LookAlike
	for s, n := range groups {
		_, why := in.src.funcAt(s.loc)
		if why == "" {
			why = "the C of a value whose type the declaration does not show"
		}
		what := "this select"
		if waitKind(s.state, s.frames) == "chan receive" {
			what = "this receive"
		}
		out = append(out, LookAlike{Location: s.loc.Function, State: s.state, Count: int64(n), Kind: "source-absent",
			Reason: fmt.Sprintf("%s: cannot rule out a timer case in %s (%s:%d); its statement in the source would tell whether a timer ends it", why, what, s.loc.File, s.loc.Line)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Location < out[j].Location
	})
	return out[:min(len(out), maxLookAlikes)]
}
