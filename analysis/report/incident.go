package report

import (
	"fmt"
	"github.com/leakscope/leakscope/internal/format"
	"strings"

	"github.com/leakscope/leakscope/analysis"
)

// incidentLine is an incident in one line, its fix included: what the top
// of a report says. Names from the input go through code.
func incidentLine(inc analysis.Incident) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** — %s", inc.ID, incidentWhat(inc))
	if inc.Fix != "" {
		b.WriteString(" **Fix:** " + fixText(inc.Fix, inc.Origin))
	}
	return b.String()
}

// incidentWhat says what leaks, from where and how fast.
func incidentWhat(inc analysis.Incident) string {
	where := "an unknown caller"
	if inc.Origin != nil {
		where = code(shortFn(inc.Origin.Function))
	}
	if inc.ParkedIn != "" {
		where += " (parked in " + code(shortFn(inc.ParkedIn)) + ")"
	}
	what := inc.Title
	if what == "" {
		what = inc.Pattern
	}
	heap := ""
	if inc.BytesPerCall > 0 {
		heap = " and ~" + format.Bytes(inc.BytesPerCall) + " ± " + format.Bytes(inc.BytesPerCallBound) + " of heap"
	} else if inc.RetainedBytes > 0 {
		heap = ", holding " + format.Bytes(float64(inc.RetainedBytes)) + " of heap"
	}
	switch {
	case inc.Goroutines == 0 && inc.BytesPerMin == 0:
		// A level change, not a rate: never "+0 B/min".
		return fmt.Sprintf("heap allocated under %s rose to %s (%s).", where, format.Bytes(float64(inc.RetainedBytes)), lit(what))
	case inc.Goroutines == 0:
		return fmt.Sprintf("heap allocated under %s grows %s to %s (%s).", where, rate(inc.BytesPerMin, "bytes"), format.Bytes(float64(inc.RetainedBytes)), lit(what))
	case inc.CallsPerMin > 0 && len(inc.Suspects) == 1:
		return fmt.Sprintf("%s created from %s %s, %s%s (%s).", format.Count(int64(inc.Goroutines), "goroutine"), where, format.Verb(inc.Goroutines, "leaks", "leak"), rate(inc.GoroutinesPerMin, ""), heap, lit(what))
	case inc.CallsPerMin > 0:
		return fmt.Sprintf("each call to %s leaks %s%s (%s); %s calls/min, %s now.", where, goroutines(inc.PerCall), heap, lit(what), trimNum(inc.CallsPerMin), format.Count(int64(inc.Goroutines), "goroutine"))
	}
	return fmt.Sprintf("%s created from %s %s stuck%s (%s).", format.Count(int64(inc.Goroutines), "goroutine"), where, format.Verb(inc.Goroutines, "is", "are"), heap, lit(what))
}

func goroutines(n float64) string {
	if n == 1 {
		return "1 goroutine"
	}
	return trimNum(n) + " goroutines"
}

func trimNum(v float64) string {
	if v == float64(int64(v)) {
		return format.Int(int64(v))
	}
	return format.Number(v)
}

// fixText renders a fix whose {origin} analysis replaced by the user's
// function in backticks: that name comes from the input, so it becomes a
// code span like every other name.
func fixText(fix string, o *analysis.Origin) string {
	if o == nil {
		return fix
	}
	short := shortFn(o.Function)
	return strings.ReplaceAll(fix, "`"+short+"`", code(short))
}

// incidentsSection lists the incidents, each with its members, origin and
// creation chain, at the top of a report.
func incidentsSection(d *document, rep *analysis.Report, level int) {
	if len(rep.Incidents) == 0 {
		return
	}
	d.h(level, "Incidents")
	byID := map[string]analysis.Suspect{}
	for _, s := range rep.Suspects {
		byID[s.ID] = s
	}
	for _, inc := range rep.Incidents {
		d.hid(level+1, fmt.Sprintf("%s · %s · score %s", inc.ID, incidentTitle(inc), format.Score(inc.Score)), strings.ToLower(inc.ID))
		d.p(incidentWhat(inc))
		var facts []string
		if o := inc.Origin; o != nil {
			f := "**Origin (your code):** " + code(o.Function)
			if o.File != "" {
				f += " (" + fileLit(o.File, o.Line) + ")"
			}
			facts = append(facts, f+", from "+lit(basisText(o.Basis)))
		}
		if len(inc.CreationChain) > 0 {
			facts = append(facts, "**Created through:** "+chainLine(inc.CreationChain))
		}
		if !inc.FirstSeen.IsZero() {
			facts = append(facts, "**First seen:** "+format.Time(inc.FirstSeen))
		}
		if inc.RetainedBytes > 0 {
			// A rate of zero is one the analysis did not measure (JSON
			// leaves bytes_per_min out): say why rather than "+0 B/min".
			growth := "no growth rate: it rose in a single step between two heap snapshots (a level, not a rate)"
			if inc.BytesPerMin != 0 {
				growth = rate(inc.BytesPerMin, "bytes")
			}
			facts = append(facts, "**Heap it holds:** "+format.Bytes(float64(inc.RetainedBytes))+", "+growth)
		}
		d.ul(facts...)
		if inc.Description != "" {
			d.p(inc.Description)
		}
		if inc.Fix != "" {
			d.p("**Fix:** " + fixText(inc.Fix, inc.Origin))
		}
		var rows [][]string
		for _, id := range inc.Suspects {
			s := byID[id]
			// The member's own figures, as the analysis formatted them.
			count, growth := fmt.Sprint(s.Count), rate(s.GrowthPerMin, "")
			if t := s.Display; t != nil {
				count, growth = t.Count, t.Rate
			}
			rows = append(rows, []string{"[" + s.ID + "](#" + strings.ToLower(s.ID) + ")", s.Kind, lit(s.Pattern), code(shortFn(s.Location)), count, growth})
		}
		d.tbl([]string{"member", "kind", "pattern", "location", "count", "growth"}, rows)
	}
}

func incidentTitle(inc analysis.Incident) string {
	if inc.Title != "" {
		return lit(inc.Title) + " (" + lit(inc.Pattern) + ")"
	}
	return lit(inc.Pattern)
}

// chainLine renders a creation chain, nearest hop first.
func chainLine(chain []analysis.CreationHop) string {
	var parts []string
	for _, h := range chain {
		s := "goroutine " + fmt.Sprint(h.Goid)
		if h.Goid == 0 {
			s = "a goroutine"
		}
		if h.Function != "" {
			s += " (" + code(shortFn(h.Function)) + ")"
		}
		if len(h.Stack) > 0 {
			s += " in " + stackLine(h.Stack)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", created by ")
}

// stackLine shows a hop's creation stack (which analysis cut at the
// user's frame) from the caller down to the go statement.
func stackLine(fr []analysis.Frame) string {
	var names []string
	for i := len(fr) - 1; i >= 0; i-- {
		names = append(names, code(shortFn(fr[i].Function)))
	}
	return strings.Join(names, " → ")
}

func basisText(b string) string {
	switch b {
	case "trace":
		return "the trace's goroutine-creation stacks"
	case "ebpf":
		return "eBPF goroutine-creation stacks"
	case "dump":
		return "the dumps' created-by lines"
	case "ebpf-gopc":
		return "eBPF go_create events"
	case "allocation":
		return "heap allocation stacks"
	case "served":
		return "the goroutines' own stacks (a server's loop starts them per connection or request and calls this handler)"
	case "stacks":
		return "other stacks through the creator function (allocation stacks, goroutines caught inside it)"
	case "source":
		return "the program's own source (the one function whose calls reach the creator)"
	case "creator":
		return "the creator goroutine's entry function"
	}
	return "basis " + b
}
