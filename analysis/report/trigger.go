package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/internal/format"
)

// triggerLines puts what started the capture near the top: its sentence
// (analysis.TriggerText), then for an alert every field Alertmanager
// sent, each value quoted in a code block so that no label adds markup.
func triggerLines(d *document, rep *analysis.Report) {
	b := rep.Bundle
	if b.Trigger == nil {
		return
	}
	d.p("**Trigger:** " + lit(b.TriggerText) + ".")
	al := b.Trigger.Alert
	if al == nil {
		return
	}
	var lines strings.Builder
	line := func(k, v string) { fmt.Fprintf(&lines, "%-13s %s\n", k, strconv.Quote(v)) }
	line("alert", al.Name)
	if !al.StartsAt.IsZero() {
		line("firing since", format.Time(al.StartsAt))
	}
	if al.Alertmanager != "" {
		line("alertmanager", al.Alertmanager)
	}
	if al.GeneratorURL != "" {
		line("rule", al.GeneratorURL)
	}
	keys := make([]string, 0, len(al.Labels))
	for k := range al.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&lines, "label         %s=%s\n", strconv.Quote(k), strconv.Quote(al.Labels[k]))
	}
	d.code("", strings.TrimSuffix(lines.String(), "\n"))
}
