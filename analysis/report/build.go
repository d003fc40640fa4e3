package report

import (
	"fmt"
	"github.com/leakscope/leakscope/internal/format"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/leakscope/leakscope/analysis"
)

// buildReport lays out the leak report.
func buildReport(rep *analysis.Report, opts Options) *document {
	d := &document{title: opts.Title}
	if d.title == "" {
		d.title = "Leak report: " + lit(targetName(rep))
	}
	d.h(1, d.title)
	triggerLines(d, rep)
	if len(rep.Incidents) > 0 {
		// The first line is the top incident and its fix.
		d.p(incidentLine(rep.Incidents[0]))
	}
	d.p(bundleLine(rep))
	incidentsSection(d, rep, 2)
	d.h(2, "Suspects")
	if len(rep.Suspects) == 0 {
		d.p("No leak suspects: no goroutine group is stuck or grew steadily, and no heap allocation site grew steadily.")
	} else {
		d.tbl(suspectTableHead, suspectRows(rep.Suspects))
		for i, s := range rep.Suspects {
			if i >= opts.maxSuspects() {
				d.p(fmt.Sprintf("%d more suspects are listed in the table above only.", len(rep.Suspects)-i))
				break
			}
			suspectSection(d, rep, s, opts, i < opts.flameGraphs(), 3)
		}
	}
	lookAlikesSection(d, rep, 2)
	inputsSection(d, rep, 2)
	timelineSection(d, rep, 2)
	evidenceCharts(d, rep, 2, "Goroutines, heap and GC")
	heapSection(d, rep, 2)
	spansSection(d, rep, 2)
	leakProfileSection(d, rep, 2)
	raceSection(d, rep, 2)
	warningsSection(d, rep, 2)
	return d
}

// buildPostmortem lays out the usual postmortem: summary, impact,
// timeline, root-cause candidates, evidence, remediation, follow-ups.
func buildPostmortem(rep *analysis.Report, opts Options) *document {
	d := &document{title: opts.Title}
	if d.title == "" {
		d.title = "Postmortem: " + leakNoun(rep) + " in " + lit(targetName(rep))
	}
	d.h(1, d.title)
	d.p(postmortemStatus(rep))
	triggerLines(d, rep)

	d.h(2, "Summary")
	postmortemSummary(d, rep)

	d.h(2, "Impact")
	d.ul(impactItems(rep)...)

	timelineSection(d, rep, 2)

	d.h(2, "Root-cause candidates")
	rootCauseSection(d, rep, opts)
	evidenceCharts(d, rep, 2, "Evidence")
	heapSection(d, rep, 3)
	spansSection(d, rep, 3)
	leakProfileSection(d, rep, 3)
	raceSection(d, rep, 3)

	d.h(2, "Remediation")
	d.ul(remediationItems(rep)...)

	d.h(2, "Follow-ups")
	d.ul(slices.Clone(followUps)...)
	d.h(2, "Appendix: capture")
	d.p(bundleLine(rep))
	warningsSection(d, rep, 3)
	return d
}

// postmortemStatus is the postmortem's first line: a draft, from which
// capture and when.
func postmortemStatus(rep *analysis.Report) string {
	if when := rep.GeneratedAt; !when.IsZero() {
		return fmt.Sprintf("*Status: draft written by leakscope on %s from capture %s. Review the root-cause candidates against the code before publishing.*",
			when.UTC().Format("2006-01-02"), code(rep.Bundle.CaptureID))
	}
	return fmt.Sprintf("*Status: draft written by leakscope from capture %s, which ended on %s. Review the root-cause candidates against the code before publishing.*",
		code(rep.Bundle.CaptureID), rep.Bundle.End.UTC().Format("2006-01-02"))
}

// postmortemSummary says what leaked, from the top three incidents, and
// gives each one's line; or that nothing did.
func postmortemSummary(d *document, rep *analysis.Report) {
	if len(rep.Suspects) == 0 {
		d.p(fmt.Sprintf("The capture (%s) shows no leak: no goroutine group grew steadily or was marked leaked by the runtime, and no heap allocation site grew steadily.", window(rep)))
		return
	}
	top := rep.Incidents[:min(3, len(rep.Incidents))]
	var parts []string
	for _, inc := range top {
		parts = append(parts, incidentWhat(inc))
	}
	d.p(fmt.Sprintf("During the capture (%s), %s", window(rep), strings.Join(parts, " ")))
	for _, inc := range top {
		d.p(incidentLine(inc))
	}
}

// rootCauseSection lists the incidents and then the suspects in full, as
// many as opts allows.
func rootCauseSection(d *document, rep *analysis.Report, opts Options) {
	if len(rep.Suspects) == 0 {
		d.p("None.")
	}
	incidentsSection(d, rep, 3)
	for i, s := range rep.Suspects {
		if i >= opts.maxSuspects() {
			break
		}
		suspectSection(d, rep, s, opts, i < opts.flameGraphs(), 3)
	}
}

// remediationItems are the fixes: one per incident pattern and fix, then
// one per pattern of the suspects outside an incident.
func remediationItems(rep *analysis.Report) []string {
	seen := map[string]bool{}
	var fixes []string
	for _, inc := range rep.Incidents {
		key := inc.Pattern + "\x00" + inc.Fix
		if inc.Fix == "" || seen[key] {
			continue
		}
		seen[key] = true
		fixes = append(fixes, fmt.Sprintf("**%s** (%s): %s", lit(inc.Pattern), inc.ID, fixText(inc.Fix, inc.Origin)))
	}
	for _, s := range rep.Suspects {
		if s.Incident != "" {
			continue // its incident's fix is listed
		}
		if seen[s.Pattern] || s.Fix == "" {
			continue
		}
		seen[s.Pattern] = true
		fixes = append(fixes, fmt.Sprintf("**%s** (%s at %s): %s", lit(s.Pattern), s.ID, code(shortFn(s.Location)), s.Fix))
	}
	if len(fixes) == 0 {
		fixes = append(fixes, "Nothing to fix from this capture.")
	}
	return fixes
}

// followUps are the postmortem's standing follow-ups.
var followUps = []string{
	"Add a regression test that runs the leaking path and checks the goroutine count returns to its baseline (for example with go.uber.org/goleak).",
	"Alert on the goroutine count and heap in use growing steadily over hours, not only on absolute limits.",
	"Run `leakscope report BUNDLE --fail-on 50` on a capture from a load test in CI.",
}

var suspectTableHead = []string{"#", "id", "score", "kind", "pattern", "location", "creator", "count", "at", "growth", "first seen", "onset"}

func suspectRows(sus []analysis.Suspect) [][]string {
	var rows [][]string
	for i, s := range sus {
		t := s.Display
		if t == nil {
			t = &analysis.SuspectText{}
		}
		creator := ""
		if s.Creator != "" {
			creator = code(shortFn(s.Creator))
		}
		onset := ""
		if s.Onset != nil {
			onset = format.Time(s.Onset.At)
		}
		rows = append(rows, []string{fmt.Sprint(i + 1), s.ID, format.Score(s.Score), s.Kind, lit(s.Pattern),
			code(shortFn(s.Location)), creator, t.Count, t.CountAt, t.Rate, t.FirstSeen, onset})
	}
	return rows
}

func impactItems(rep *analysis.Report) []string {
	var items []string
	b := rep.Bundle
	if b.PeakGoroutines > 0 {
		items = append(items, fmt.Sprintf("Peak goroutine count in the capture: %s.", format.Int(b.PeakGoroutines)))
	}
	// The heap figure is the heap section's (heap profiles, in use); the
	// trace's live heap, when there is one, is named as its own.
	if h := rep.Series.HeapInuse; len(h) >= 2 {
		items = append(items, fmt.Sprintf("Heap in use (heap profiles) went from %s to %s, a change of %s over %d snapshots.",
			format.Bytes(h[0].Value), format.Bytes(h[len(h)-1].Value), format.Bytes(float64(rep.Heap.GrowthBytes)), len(h)))
	}
	if h := rep.Series.HeapLive; rep.Series.HeapLiveFrom == "trace" && len(h) >= 2 {
		items = append(items, fmt.Sprintf("The trace's live heap (inside its windows only) went from %s to %s.", format.Bytes(h[0].Value), format.Bytes(h[len(h)-1].Value)))
	}
	for _, s := range rep.Suspects {
		t := s.Display
		it := fmt.Sprintf("%s: %s at %s (%s)", s.ID, t.Count, t.CountAt, t.Rate)
		if s.Kind == analysis.KindHeap {
			it = fmt.Sprintf("%s: %s in use at %s at %s (%s)", s.ID, t.Count, code(shortFn(s.Location)), t.CountAt, t.Rate)
		}
		// Extrapolate only a steady trend: one step is a level, not a rate.
		if s.Range != nil && s.Range.Trend == analysis.TrendSteady && s.GrowthPerMin > 0 {
			more := format.Count(int64(math.Round(60*s.GrowthPerMin)), "more goroutine")
			if s.Kind == analysis.KindHeap {
				more = format.Bytes(60*s.GrowthPerMin) + " more"
			}
			it += "; if it keeps this rate, about " + more + " per hour"
		}
		if t.Retained != "" {
			it += ", holding " + t.Retained + " of heap"
		}
		items = append(items, it+".")
	}
	if len(items) == 0 {
		items = append(items, "No measurable impact in this capture.")
	}
	return items
}

func timelineSection(d *document, rep *analysis.Report, level int) {
	d.h(level, "Timeline")
	var rows [][]string
	for _, e := range rep.Timeline {
		rows = append(rows, []string{e.TS.UTC().Format("2006-01-02 15:04:05.000"), lit(e.Event)})
	}
	if len(rows) == 0 {
		d.p("No dated events.")
	}
	d.tbl([]string{"time (UTC)", "event"}, rows)
}

func evidenceCharts(d *document, rep *analysis.Report, level int, title string) {
	var sl []line
	for i, s := range rep.Suspects {
		if i == 4 {
			break
		}
		if s.Kind == analysis.KindGoroutine {
			sl = append(sl, line{name: s.ID + " " + shortFn(s.Location), points: s.Counts})
		}
	}
	d.h(level, title) // dropped when no chart follows
	d.chart("Goroutines", "", "Total goroutines over time", []line{{name: "goroutines", points: rep.Series.Goroutines}})
	d.chart("Goroutines per suspect", "", "Goroutine suspects over time", sl)
	heap := []line{{name: "heap profile in use", points: rep.Series.HeapInuse, color: "#9467bd"}}
	if rep.Series.HeapLiveFrom == "trace" {
		heap = append([]line{{name: "live heap (trace windows)", points: rep.Series.HeapLive, windows: rep.Series.Windows}}, heap...)
	}
	d.chart("Heap", "bytes", "Heap over time", heap)
	// Cycles counted in the trace windows have no points between them;
	// the eBPF probes' are of the whole capture.
	var gcWindows []analysis.Window
	if rep.Series.GCFrom == "trace" {
		gcWindows = rep.Series.Windows
	}
	d.chart("GC cycles", "", "GC cycles over time", []line{{name: "gc cycle", points: rep.Series.GC, color: "#7f7f7f", windows: gcWindows}})
}

func heapSection(d *document, rep *analysis.Report, level int) {
	hg := rep.Heap
	if len(hg.Snapshots) == 0 {
		return
	}
	d.h(level, "Heap growth")
	d.p(fmt.Sprintf("%d heap snapshots; in-use heap changed by %s between the first and the last, %s of it on allocation sites attributed to goroutine suspects.",
		len(hg.Snapshots), format.Bytes(float64(hg.GrowthBytes)), format.Bytes(float64(hg.AttributedBytes))))
	if hg.Sight != nil {
		d.p("What these profiles can see: " + hg.Sight.Text + ".")
	}
	var rows [][]string
	for i, g := range hg.Growers {
		if i == 10 {
			break
		}
		who := g.Suspect
		if who == "" {
			who = g.HeapSuspect
		}
		growth := analysis.FormatRate(g.BytesPerMin, analysis.KindHeap)
		if g.Range != nil && g.Range.Trend == analysis.TrendStep {
			growth = "rose once by " + format.Bytes(g.Range.Rise)
		}
		rows = append(rows, []string{code(shortFn(g.Location)), fileLit(g.File, g.Line), lit(g.Object), format.Bytes(float64(g.InuseBytes)),
			growth, fmt.Sprintf("%.2f", g.Fit.R2), fmt.Sprint(len(g.StackIDs)), who})
	}
	if len(hg.Growers) > 0 {
		d.p("In use at " + format.Time(hg.Growers[0].CountAt) + ", one row per allocating line (all its call paths) and suspect:")
	}
	d.tbl([]string{"allocation site", "source", "what", "in use", "growth", "R²", "paths", "suspect"}, rows)
	rows = nil
	for i, e := range hg.Diff {
		if i == 10 {
			break
		}
		rows = append(rows, []string{code(shortFn(e.Location)), format.Bytes(float64(e.BaseBytes)), format.Bytes(float64(e.Bytes)), format.Bytes(float64(e.DeltaBytes)), signedInt(e.DeltaObjects)})
	}
	if len(rows) > 0 {
		intro := "First versus last heap snapshot:"
		if hg.OwnDeltaBytes != 0 {
			intro = fmt.Sprintf("First versus last heap snapshot, without the capture's own allocations in the target (profile and trace writers and their compressors, which changed by %s):", format.Bytes(float64(hg.OwnDeltaBytes)))
		}
		d.p(intro)
		d.tbl([]string{"allocation site", "first", "last", "Δ bytes", "Δ objects"}, rows)
	}
}

func spansSection(d *document, rep *analysis.Report, level int) {
	sp := rep.Spans
	if sp.Tasks == 0 && sp.Regions == 0 {
		return
	}
	d.h(level, "Spans")
	d.p(fmt.Sprintf("%s and %s in the trace; %d never ended.", format.Count(int64(sp.Tasks), "task"), format.Count(int64(sp.Regions), "region"), len(sp.NeverEnded)))
	var rows [][]string
	for i, o := range sp.Outliving {
		if i == 10 {
			break
		}
		rows = append(rows, []string{code(o.Span), code(shortFn(o.Function)), fmt.Sprint(o.Count), o.Suspect})
	}
	if len(rows) > 0 {
		d.p("Goroutines that outlived the span open on their creator when they were created:")
		d.tbl([]string{"span", "goroutine function", "count", "suspect"}, rows)
	}
	rows = nil
	for i, s := range sp.NeverEnded {
		if i == 10 {
			break
		}
		rows = append(rows, []string{lit(s.Kind), code(s.Name), fmt.Sprint(s.Goid), s.Start.UTC().Format("15:04:05.000")})
	}
	if len(rows) > 0 {
		d.p("Spans never ended:")
		d.tbl([]string{"kind", "name", "goroutine", "start"}, rows)
	}
}

func leakProfileSection(d *document, rep *analysis.Report, level int) {
	c := rep.LeakProfile
	if c == nil {
		return
	}
	d.h(level, "Runtime goroutineleak profile")
	d.ul(
		fmt.Sprintf("The last of %s (at %s) reports %s.", format.Count(int64(c.Snapshots), "goroutineleak profile"), format.Time(c.LeakedAt), format.Count(int64(c.Leaked), "leaked goroutine")),
		"Both agree on: "+orNone(c.Agree),
		"Only this analysis: "+orNone(c.OnlyAnalysis),
		"Only the runtime profile: "+orNone(c.OnlyProfile),
	)
}

func warningsSection(d *document, rep *analysis.Report, level int) {
	if len(rep.Warnings) == 0 {
		return
	}
	d.h(level, "Warnings")
	items := make([]string, len(rep.Warnings))
	for i, w := range rep.Warnings {
		items[i] = lit(w)
	}
	d.ul(items...)
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return codeJoin(s, ", ")
}

// targetName names the program a report is about.
func targetName(rep *analysis.Report) string {
	b := rep.Bundle
	switch {
	case b.Exe != "":
		// The program's name, as the fleet names its service: a module
		// holds many programs (the demo's sample lives in leakscope's own
		// module, so "leak in github.com/leakscope/leakscope" read as if
		// the tool leaked).
		return path.Base(b.Exe)
	case b.Module != "":
		return b.Module
	case b.URL != "":
		return b.URL
	case b.CaptureID != "":
		return b.CaptureID
	}
	return "capture"
}

func leakNoun(rep *analysis.Report) string {
	g, h := false, false
	for _, s := range rep.Suspects {
		if s.Kind == analysis.KindGoroutine {
			g = true
		} else {
			h = true
		}
	}
	switch {
	case g && h:
		return "goroutine and heap leak"
	case g:
		return "goroutine leak"
	case h:
		return "heap growth"
	}
	return "leak investigation"
}

func window(rep *analysis.Report) string {
	b := rep.Bundle
	if b.Start.IsZero() {
		return "time range unknown"
	}
	return fmt.Sprintf("%s to %s UTC, %s", b.Start.UTC().Format("2006-01-02 15:04:05"), b.End.UTC().Format("15:04:05"), b.End.Sub(b.Start).Round(time.Second))
}

func bundleLine(rep *analysis.Report) string {
	b := rep.Bundle
	var parts []string
	if b.CaptureID != "" {
		parts = append(parts, "capture "+code(b.CaptureID))
	}
	if b.PID != 0 {
		parts = append(parts, fmt.Sprintf("pid %d", b.PID))
	}
	if b.URL != "" {
		parts = append(parts, lit(b.URL))
	}
	if b.GoVersion != "" {
		parts = append(parts, lit(b.GoVersion))
	}
	parts = append(parts, window(rep))
	parts = append(parts, fmt.Sprintf("%s (%s), %s", format.Count(int64(b.GoroutineSnapshots), "goroutine snapshot"), format.Count(b.GoroutineRows, "row"), format.Count(int64(b.HeapSnapshots), "heap snapshot")))
	if len(b.Sources) > 0 {
		parts = append(parts, "sources: "+strings.Join(b.Sources, ", "))
	}
	return strings.Join(parts, "; ") + "."
}

// signedInt writes a change of a count with its sign and thousands
// separators: "+1,204", "-3", "+0".
func signedInt(n int64) string {
	if n < 0 {
		return format.Int(n)
	}
	return "+" + format.Int(n)
}
