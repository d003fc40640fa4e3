package analysis

import (
	"sort"
	"strings"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/internal/format"
)

// TriggerText is the one sentence every view (report, postmortem,
// workbench, fleet) shows of what started a capture: "Alertmanager alert
// GoroutineGrowthFast (instance=10.0.0.7:8080, job=svc), firing since
// 2026-12-06 09:41:07.000 UTC; captured on node vm at …" or "the node
// agent's growth rule (…) on node vm at …"; "" for none.
func TriggerText(t *bundle.Trigger) string {
	if t == nil {
		return ""
	}
	var b strings.Builder
	switch {
	case t.Alert != nil:
		b.WriteString("Alertmanager alert " + t.Alert.Name)
		if l := LabelText(t.Alert.Labels); l != "" {
			b.WriteString(" (" + l + ")")
		}
		if !t.Alert.StartsAt.IsZero() {
			b.WriteString(", firing since " + format.Time(t.Alert.StartsAt))
		}
	case t.Source == bundle.TriggerRule:
		b.WriteString("the node agent's growth rule")
		if t.Reason != "" {
			b.WriteString(" (" + strings.TrimPrefix(t.Reason, "growth rule: ") + ")")
		}
	default:
		b.WriteString(t.Source)
		if t.Reason != "" {
			b.WriteString(" (" + t.Reason + ")")
		}
	}
	b.WriteString("; captured on node " + bundle.OrUnknown(t.Node))
	if !t.At.IsZero() {
		b.WriteString(" at " + format.Time(t.At))
	}
	return b.String()
}

// LabelText writes an alert's labels but its alertname, sorted by name,
// as "k=v, k=v".
func LabelText(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		if k != "alertname" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + labels[k]
	}
	return strings.Join(parts, ", ")
}
