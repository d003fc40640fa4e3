package report

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/flame"
	"github.com/leakscope/leakscope/ingest/schema"
)

// suspectSection describes one suspect in full.
func suspectSection(d *document, s analysis.Suspect, opts Options, withFlame bool, level int) {
	d.hid(level, fmt.Sprintf("%s · %s · score %.0f", s.ID, titleOf(s), s.Score), strings.ToLower(s.ID))
	var facts []string
	if s.Kind == analysis.KindGoroutine {
		facts = append(facts, fmt.Sprintf("**Parked at:** %s (%s)", code(s.Location), fileLit(s.File, s.Line)))
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
		facts = append(facts, fmt.Sprintf("**Goroutines:** %d now, %s", s.Count, rate(s.GrowthPerMin, "")))
	} else {
		facts = append(facts, fmt.Sprintf("**Allocated at:** %s (%s)", code(s.Location), fileLit(s.File, s.Line)))
		facts = append(facts, fmt.Sprintf("**In use:** %s now, %s", analysis.FormatBytes(float64(s.Count)), rate(s.GrowthPerMin, "bytes")))
	}
	facts = append(facts, fmt.Sprintf("**Fit:** R²=%.2f over %d points, %.0f%% of steps non-decreasing", s.Fit.R2, s.Fit.Points, 100*s.Fit.Monotone))
	if !s.FirstSeen.IsZero() {
		facts = append(facts, "**First seen:** "+s.FirstSeen.UTC().Format(time.RFC3339))
	}
	if s.MaxWaitMinutes > 0 {
		facts = append(facts, fmt.Sprintf("**Longest wait:** %d minutes", s.MaxWaitMinutes))
	}
	if s.RetainedBytes > 0 {
		facts = append(facts, "**Heap retained (attributed):** "+analysis.FormatBytes(float64(s.RetainedBytes)))
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
	d.ul(facts...)
	if s.Description != "" {
		d.p(s.Description)
	}
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
	if snip := sourceSnippet(s.File, s.Line, 3); snip != "" {
		d.p(fmt.Sprintf("**Source** (%s)", fileLit(s.File, s.Line)))
		d.code("go", snip)
	}
	if len(s.Stack) > 0 {
		d.p("**Stack** (leaf first)")
		d.code("", stackText(s.Stack, 24))
	}
	unit := ""
	if s.Kind == analysis.KindHeap {
		unit = "bytes"
	}
	d.fig(chartSVG(s.ID+": "+countLabel(s), unit, []line{{name: s.ID + " " + shortFn(s.Location), points: s.Counts}}), s.ID+" over time")
	if withFlame {
		if svg, caption := flameSVG(s, opts); svg != "" {
			d.fig(svg, caption)
		}
	}
	if s.Fix != "" {
		d.p("**Usual fix:** " + fixText(s.Fix, s.Origin))
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

// flameSVG draws the flame graph of a suspect: goroutines from the latest
// dump focused on its location, or heap growth (latest minus first
// snapshot) focused on its allocation site.
func flameSVG(s analysis.Suspect, opts Options) (string, string) {
	if opts.Bundle == nil {
		return "", ""
	}
	focus := []string{"^" + regexp.QuoteMeta(s.Location) + "$"}
	q := flame.Query{Profile: schema.ProfileGoroutine, Focus: focus}
	caption := "Flame graph: goroutines through " + lit(s.Location) + " (latest snapshot)"
	if s.Kind == analysis.KindHeap {
		q = flame.Query{Profile: schema.ProfileHeap, Focus: focus}
		if len(s.Counts) > 1 {
			q.Base = s.Counts[0].TS.UnixNano()
			q.Snapshot = s.Counts[len(s.Counts)-1].TS.UnixNano()
		}
		caption = "Flame graph: in-use heap growth through " + lit(s.Location) + " (last minus first snapshot)"
	} else if len(s.Counts) > 0 {
		q.Snapshot = s.Counts[len(s.Counts)-1].TS.UnixNano()
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

// sourceSnippet returns lines around line of file, the line itself
// marked, when the file is readable here.
func sourceSnippet(file string, line, around int) string {
	if file == "" || line <= 0 || !strings.HasSuffix(file, ".go") {
		return ""
	}
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var b strings.Builder
	for n := 1; sc.Scan() && n <= line+around; n++ {
		if n < line-around {
			continue
		}
		mark := "   "
		if n == line {
			mark = "→  "
		}
		fmt.Fprintf(&b, "%s%5d  %s\n", mark, n, sc.Text())
	}
	return strings.TrimRight(b.String(), "\n")
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
	sign := "+"
	if v < 0 {
		sign = ""
	}
	if unit == "bytes" {
		return sign + analysis.FormatBytes(v) + "/min"
	}
	if v >= 100 || v <= -100 {
		return fmt.Sprintf("%s%.0f/min", sign, v)
	}
	return fmt.Sprintf("%s%.1f/min", sign, v)
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

// shortFn drops the import path of a function name.
func shortFn(fn string) string {
	if i := strings.LastIndexByte(fn, '/'); i >= 0 {
		return fn[i+1:]
	}
	return fn
}
