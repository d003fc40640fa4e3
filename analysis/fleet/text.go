package fleet

import (
	"fmt"
	"strings"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/internal/format"
)

// LeakText is a [Leak] row as every view prints it: the worst capture's
// score, count and growth with units ("97.6", "308 goroutines",
// "+814/min"); its nodes ("node-a, node-b, unknown node"); since when
// ("2026-12-06 09:41:07.000 UTC", "onset unknown"); and its builds
// ("present in every capture of build 3f2a9c0e71bd (2) since …; absent in
// 1c9e4b7a2d10 (1 capture)").
type LeakText struct {
	Score  string `json:"score"`
	Count  string `json:"count"`
	Growth string `json:"growth_per_min"`
	Nodes  string `json:"nodes"`
	Since  string `json:"since"`
	Builds string `json:"builds"`
}

func (l *Leak) display() {
	w := l.Worst
	c := analysis.Suspect{Kind: l.Kind, Count: w.Count}
	l.Display = LeakText{Score: format.Score(w.Score), Count: analysis.CountText(c), Growth: analysis.FormatRate(w.GrowthPerMin, l.Kind),
		Nodes: nodesText(l.Nodes, l.UnknownNodes), Since: "onset unknown", Builds: buildsText(l.Builds)}
	if !l.Since.IsZero() {
		l.Display.Since = format.Time(l.Since)
	}
}

// nodesText names the nodes, and the captures that name none.
func nodesText(nodes []string, unknown int) string {
	parts := append([]string{}, nodes...)
	if unknown > 0 {
		parts = append(parts, format.Count(int64(unknown), "capture")+" on an unknown node")
	}
	return strings.Join(parts, ", ")
}

// summaryText says how many captures on how many nodes.
func summaryText(captures int, nodes []string, unknown int) string {
	s := fmt.Sprintf("%s on %s", format.Count(int64(captures), "capture"), format.Count(int64(len(nodes)), "node"))
	if len(nodes) > 0 {
		s += ": " + strings.Join(nodes, ", ")
	}
	if unknown > 0 {
		s += fmt.Sprintf("; %s on an unknown node", format.Count(int64(unknown), "capture"))
	}
	return s
}

// buildsText says, build by build, whether the leak is present.
func buildsText(bs []BuildPresence) string {
	parts := make([]string, 0, len(bs))
	for _, b := range bs {
		name := "build " + b.Build
		if b.Build == "" {
			name = "unknown build"
		}
		var s string
		switch {
		case b.Present == 0:
			s = fmt.Sprintf("absent in %s (%s)", name, format.Count(int64(b.Captures), "capture"))
		case b.Present == b.Captures:
			s = fmt.Sprintf("present in every capture of %s (%d)", name, b.Captures)
		default:
			s = fmt.Sprintf("present in %d of %s of %s", b.Present, format.Count(int64(b.Captures), "capture"), name)
		}
		if b.Present > 0 && !b.Since.IsZero() {
			s += " since " + format.Time(b.Since)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}
