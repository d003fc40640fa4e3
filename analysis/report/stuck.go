package report

import (
	"fmt"
	"strings"

	"github.com/leakscope/leakscope/analysis"
)

// stuckFacts are the stuck verdict's lines of a goroutine suspect: the
// verdict, what the members wait on, the cycle they are in and the
// groups folded under them.
func stuckFacts(s analysis.Suspect) []string {
	var facts []string
	if s.Display != nil && s.Display.Verdict != "" {
		facts = append(facts, "**Verdict:** "+lit(s.Display.Verdict))
	}
	if len(s.WaitsOn) > 0 {
		facts = append(facts, "**Waits on:** "+codeJoin(s.WaitsOn, ", "))
	}
	if len(s.Cycle) > 0 {
		facts = append(facts, "**In a wait-for cycle with:** "+codeJoin(s.Cycle, ", "))
	}
	for _, c := range s.Consequences {
		facts = append(facts, "**Waiting for it (folded here):** "+consequenceText(c))
	}
	return facts
}

func consequenceText(c analysis.Consequence) string {
	return fmt.Sprintf("%s [%s] ×%d — %s", code(c.Location), lit(c.State), c.Count, lit(c.Relation))
}

// lookAlikesSection lists the parked groups the stuck verdict let go.
func lookAlikesSection(d *document, rep *analysis.Report, level int) {
	if len(rep.LookAlikes) == 0 {
		return
	}
	d.h(level, "Parked but not suspects")
	var rows [][]string
	for _, l := range rep.LookAlikes {
		rows = append(rows, []string{code(shortFn(l.Location)), lit(l.State), fmt.Sprint(l.Count), lit(l.Kind), lit(l.Reason)})
	}
	d.tbl([]string{"location", "state", "goroutines", "looks like", "why"}, rows)
}

// inputsSection says what the inputs allowed and what one more would add.
func inputsSection(d *document, rep *analysis.Report, level int) {
	in := rep.Inputs
	if in == nil || len(in.Allowed)+len(in.Next) == 0 {
		return
	}
	d.h(level, "What these inputs allow")
	if len(in.Allowed) > 0 {
		d.ul(litAll(in.Allowed)...)
	}
	if len(in.Next) > 0 {
		d.p("**One more input would add:**")
		d.ul(litAll(in.Next)...)
	}
}

func litAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = lit(strings.TrimSpace(x))
	}
	return out
}
