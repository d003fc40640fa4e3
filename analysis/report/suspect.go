package report

import (
	"bytes"
	"fmt"
	"github.com/leakscope/leakscope/internal/format"
	"strings"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/flame"
)

// suspectSection describes one suspect in full.
func suspectSection(d *document, rep *analysis.Report, s analysis.Suspect, opts Options, withFlame bool, level int) {
	d.hid(level, fmt.Sprintf("%s · %s · score %s", s.ID, titleOf(s), format.Score(s.Score)), strings.ToLower(s.ID))
	var facts []string
	if s.Kind == analysis.KindGoroutine {
		facts = goroutineFacts(s)
	} else {
		facts = heapFacts(s)
	}
	d.ul(append(facts, growthFacts(s)...)...)
	if s.Description != "" {
		d.p(s.Description)
	}
	evidenceList(d, s)
	sourceBlock(d, s.Source)
	if len(s.Stack) > 0 {
		d.p("**Stack** (leaf first)")
		d.code("", stackText(s.Stack, 24))
	}
	unit := ""
	if s.Kind == analysis.KindHeap {
		unit = "bytes"
	}
	d.chart(s.ID+": "+countLabel(s), unit, s.ID+" over time", []line{{name: s.ID + " " + shortFn(s.Location), points: s.Counts}})
	if withFlame {
		if svg, caption := flameSVG(rep, s, opts); svg != "" {
			d.fig(svg, caption)
		}
	}
	if s.Fix != "" {
		d.p("**Usual fix:** " + fixText(s.Fix, s.Origin))
	}
}

// goroutineFacts are the facts a goroutine suspect's list starts with:
// where it parks, who made it, its origin in your code and its figures.
func goroutineFacts(s analysis.Suspect) []string {
	facts := []string{fmt.Sprintf("**Parked at:** %s (%s)", code(s.Location), fileLit(s.File, s.Line))}
	if s.State != "" {
		facts = append(facts, fmt.Sprintf("**State:** %s", code(s.State)))
	}
	if s.Creator != "" {
		c := fmt.Sprintf("**Created by:** %s", code(s.Creator))
		if s.CreatorFile != "" {
			c += " (" + fileLit(s.CreatorFile, s.CreatorLine) + ")"
		}
		facts = append(facts, c)
	}
	if len(s.Ancestry) > 1 {
		facts = append(facts, "**Creator chain:** "+codeJoin(s.Ancestry, " ← "))
	}
	if o := s.Origin; o != nil {
		facts = append(facts, "**Origin (your code):** "+code(o.Function)+" ("+fileLit(o.File, o.Line)+"), from "+lit(basisText(o.Basis)))
	}
	if s.Incident != "" {
		facts = append(facts, "**Incident:** ["+s.Incident+"](#"+strings.ToLower(s.Incident)+")")
	}
	facts = append(facts, fmt.Sprintf("**Goroutines:** %s", figures(s)))
	return append(facts, stuckFacts(s)...)
}

// heapFacts are the facts a heap suspect's list starts with: where it
// allocates, what is in use and what grows.
func heapFacts(s analysis.Suspect) []string {
	facts := []string{
		fmt.Sprintf("**Allocated at:** %s (%s)", code(s.Location), fileLit(s.File, s.Line)),
		fmt.Sprintf("**In use:** %s", figures(s)),
	}
	if s.Object != "" {
		facts = append(facts, fmt.Sprintf("**What grows:** %s", lit(s.Object)))
	}
	return facts
}

// growthFacts are the facts of every kind of suspect, those it has: the
// fit, when it started, how long it waits, what it retains and samples.
func growthFacts(s analysis.Suspect) []string {
	var facts []string
	if s.Fit.Points >= 2 {
		facts = append(facts, fmt.Sprintf("**Fit:** R²=%.2f over %s, %.0f%% of steps non-decreasing", s.Fit.R2, format.Count(int64(s.Fit.Points), "point"), 100*s.Fit.Monotone))
	}
	if t := s.Display; t != nil && t.FirstSeen != "" {
		facts = append(facts, "**First seen:** "+t.FirstSeen)
	}
	if t := s.Display; t != nil && t.Onset != "" {
		facts = append(facts, "**Onset:** "+t.Onset+" — "+s.Onset.Detail)
	}
	if s.MaxWaitMinutes > 0 {
		facts = append(facts, "**Longest wait:** "+format.Count(int64(s.MaxWaitMinutes), "minute"))
	}
	if s.RetainedBytes > 0 {
		facts = append(facts, "**Heap retained (attributed):** "+format.Bytes(float64(s.RetainedBytes)))
	}
	if s.Span != "" {
		facts = append(facts, fmt.Sprintf("**Started inside:** %s", code(s.Span)))
	}
	if s.LeakProfile != "" {
		facts = append(facts, "**Runtime goroutineleak profile:** "+lit(s.LeakProfile))
	}
	if len(s.Goids) > 0 {
		facts = append(facts, "**Sample goroutines:** "+goidList(s.Goids, 10))
	}
	return facts
}

// evidenceList lists a suspect's evidence other than its source quote,
// which [sourceBlock] shows.
func evidenceList(d *document, s analysis.Suspect) {
	var ev []string
	for _, e := range s.Evidence {
		if e.Kind == "source" {
			continue
		}
		ev = append(ev, fmt.Sprintf("*%s* — %s", lit(e.Kind), lit(e.Detail)))
	}
	if len(ev) > 0 {
		d.p("**Evidence**")
		d.ul(ev...)
	}
}

// sourceBlock shows the source quote q, or why there is none; nothing
// when q is nil.
func sourceBlock(d *document, q *analysis.SourceQuote) {
	if q == nil {
		return
	}
	switch snip := sourceSnippet(q); {
	case snip != "":
		d.p(fmt.Sprintf("**Source** (%s, as kept in the bundle)", fileLit(q.File, q.Line)))
		d.code("go", snip)
	case q.Status == analysis.SourceChanged:
		d.p(fmt.Sprintf("**Source** (%s): source changed since build — %s", fileLit(q.File, q.Line), lit(q.Detail)))
	default:
		d.p(fmt.Sprintf("**Source** (%s): source unavailable — %s", fileLit(q.File, q.Line), lit(q.Detail)))
	}
}

func titleOf(s analysis.Suspect) string {
	if s.Title != "" {
		return lit(s.Title) + " (" + lit(s.Pattern) + ")"
	}
	return lit(s.Pattern)
}

func countLabel(s analysis.Suspect) string {
	if s.Kind == analysis.KindHeap {
		return "bytes in use at " + shortFn(s.Location)
	}
	return "goroutines parked at " + shortFn(s.Location)
}

// flameSVG draws the flame graph of a suspect: exactly what its figures
// count (its member goroutines, or its allocation stacks) at the snapshot
// they are for, so the graph's total is the suspect's count.
func flameSVG(rep *analysis.Report, s analysis.Suspect, opts Options) (string, string) {
	if opts.Bundle == nil {
		return "", ""
	}
	sel, err := rep.Select(opts.Bundle, opts.mem(), s.ID)
	if err != nil {
		return "", ""
	}
	q := flame.Query{Snapshot: sel.Snapshot.UnixNano()}
	at := format.Time(sel.Snapshot)
	caption := fmt.Sprintf("Flame graph: the %s of %s at %s", s.Display.Count, s.ID, at)
	if sel.Profile == "" {
		q.Source, q.Goids = flame.SourceGoroutines, sel.Goids
	} else {
		q.Profile, q.Stacks = sel.Profile, sel.Stacks
		if s.Kind == analysis.KindHeap {
			caption = fmt.Sprintf("Flame graph: the %s in use at %s (%s), %s", s.Display.Count, lit(shortFn(s.Location)), s.ID, at)
		}
	}
	if len(q.Goids) == 0 && len(q.Stacks) == 0 {
		return "", ""
	}
	t, err := flame.FromBundle(opts.Bundle, opts.mem(), q)
	if err != nil || t == nil || t.Total() == 0 {
		return "", ""
	}
	var buf bytes.Buffer
	if err := flame.SVG(t, &buf, flame.SVGOptions{Width: 960, Title: s.ID + ": " + shortFn(s.Location)}); err != nil {
		return "", ""
	}
	return buf.String(), caption
}

// sourceSnippet renders a quote kept in the bundle, the quoted line
// marked; "" when the bundle holds no such line.
func sourceSnippet(q *analysis.SourceQuote) string {
	if q.Status != analysis.SourceOK {
		return ""
	}
	var b strings.Builder
	for _, l := range q.Lines {
		mark := "   "
		if l.Line == q.Line {
			mark = "→  "
		}
		fmt.Fprintf(&b, "%s%5d  %s\n", mark, l.Line, l.Text)
	}
	return strings.TrimRight(b.String(), "\n")
}

// figures is a suspect's count, its time, its rate and its range, as the
// analysis formatted them.
func figures(s analysis.Suspect) string {
	t := s.Display
	if t == nil {
		return ""
	}
	out := fmt.Sprintf("%s at %s, %s", t.Count, t.CountAt, t.Rate)
	if t.Range != "" {
		out += " (" + t.Range + ")"
	}
	return out
}

func stackText(frames []analysis.Frame, max int) string {
	var b strings.Builder
	for i, f := range frames {
		if i == max {
			fmt.Fprintf(&b, "… %d more frames\n", len(frames)-max)
			break
		}
		fmt.Fprintf(&b, "%s\n\t%s\n", f.Function, fileLine(f.File, f.Line))
	}
	return strings.TrimRight(b.String(), "\n")
}

// fileLit is fileLine marked as literal text for a document.
func fileLit(file string, line int) string { return lit(fileLine(file, line)) }

func fileLine(file string, line int) string {
	if file == "" {
		return "?"
	}
	return fmt.Sprintf("%s:%d", file, line)
}

func rate(v float64, unit string) string {
	if unit == "bytes" {
		return format.ByteRate(v)
	}
	return format.Rate(v)
}

func codeJoin(fns []string, sep string) string {
	out := make([]string, len(fns))
	for i, f := range fns {
		out[i] = code(f)
	}
	return strings.Join(out, sep)
}

func goidList(g []int64, n int) string {
	var parts []string
	for i, id := range g {
		if i == n {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprint(id))
	}
	return strings.Join(parts, ", ")
}

// shortFn drops the import path of a function name, and only it (a
// slash inside a hostile name does not cut it), and spells type arguments
// "[...]" ([flame.ShortName]).
func shortFn(fn string) string { return flame.ShortName(fn) }
