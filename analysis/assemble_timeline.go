package analysis

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/internal/format"
)

// timeline orders what happened: the capture, each suspect's first sight,
// the start of its growth and its last count, heap growth, and the span
// that starts it.
func timeline(rep *Report, b *bundle.Bundle) []TimelineEvent {
	ev := captureEvents(rep, b)
	for _, s := range rep.Suspects {
		rate := RateText(s)
		cause := ""
		if s.Creator != "" {
			cause += ", created by " + s.Creator
		}
		if s.Span != "" {
			cause += " inside " + s.Span
		}
		first, firstIdx := 0.0, -1
		for i, p := range s.Counts {
			if p.Value > 0 {
				first, firstIdx = p.Value, i
				break
			}
		}
		// When it did not exist before, its appearance is where the growth
		// begins: one event says both.
		merged := firstIdx > 0 && s.Range != nil && s.Range.Rise > 0
		if !s.FirstSeen.IsZero() {
			what := fmt.Sprintf("%s first seen: %s at %s (%s)", s.ID, format.Count(int64(first), "goroutine"), s.Location, s.Pattern)
			if s.Kind == KindHeap {
				what = fmt.Sprintf("%s first seen: %s in use at %s (%s)", s.ID, format.Bytes(first), s.Location, s.Pattern)
			}
			if merged {
				what += fmt.Sprintf(", growing %s%s", rate, cause)
			}
			ev = append(ev, TimelineEvent{TS: s.FirstSeen, Event: what, Suspect: s.ID, Kind: "suspect"})
		}
		for i := max(1, firstIdx+1); !merged && i < len(s.Counts); i++ {
			if s.Counts[i].Value > s.Counts[i-1].Value {
				ev = append(ev, TimelineEvent{TS: s.Counts[i].TS, Event: fmt.Sprintf("%s starts growing (%s)%s", s.ID, rate, cause), Suspect: s.ID, Kind: "suspect"})
				break
			}
		}
		if o := s.Onset; o != nil && !o.At.IsZero() && o.At.Before(s.FirstSeen) {
			ev = append(ev, TimelineEvent{TS: o.At, Event: fmt.Sprintf("%s probably began %s", s.ID, OnsetRange(o)), Suspect: s.ID, Kind: "suspect"})
		}
		if n := len(s.Counts); n > 1 {
			last := s.Counts[n-1]
			what := fmt.Sprintf("%s reaches %s", s.ID, format.Count(int64(last.Value), "goroutine"))
			if s.Kind == KindHeap {
				what = fmt.Sprintf("%s reaches %s", s.ID, format.Bytes(last.Value))
			}
			ev = append(ev, TimelineEvent{TS: last.TS, Event: what, Suspect: s.ID, Kind: "suspect"})
		}
	}
	if h := rep.Series.HeapLive; len(h) >= 2 {
		ev = append(ev, TimelineEvent{TS: h[len(h)-1].TS, Kind: "heap",
			Event: fmt.Sprintf("%s %s → %s over the capture", heapBasis(rep.Series.HeapLiveFrom), format.Bytes(h[0].Value), format.Bytes(h[len(h)-1].Value))})
	}
	if gc := rep.Series.GC; len(gc) > 0 {
		// The cycles' count is the last point's number: every cycle the
		// probes saw, or those inside the trace windows.
		where := " during the capture (eBPF)"
		if rep.Series.GCFrom == "trace" {
			where = " inside the trace windows"
		}
		ev = append(ev, TimelineEvent{TS: gc[len(gc)-1].TS, Kind: "gc",
			Event: format.Count(int64(gc[len(gc)-1].Value), "GC cycle") + where})
	}
	slices.SortStableFunc(ev, func(a, b TimelineEvent) int { return a.TS.Compare(b.TS) })
	if ev == nil {
		ev = []TimelineEvent{}
	}
	_ = b
	return ev
}

// captureEvents are the capture's start and end. A bundle that opens
// with the node agent's history starts with it; the capture started when
// it was triggered.
func captureEvents(rep *Report, b *bundle.Bundle) []TimelineEvent {
	var ev []TimelineEvent
	if t := CaptureStart(b.Manifest); !t.IsZero() {
		ev = append(ev, TimelineEvent{TS: t, Event: "capture started", Kind: "capture"})
		if h := rep.Bundle.Start; !h.IsZero() && h.Before(t) {
			ev = append(ev, TimelineEvent{TS: h, Event: "the node agent's history begins (its profiles before the capture was triggered)", Kind: "capture"})
		}
	}
	if t := rep.Bundle.End; !t.IsZero() {
		ev = append(ev, TimelineEvent{TS: t, Event: "capture ended", Kind: "capture"})
	}
	return ev
}

// heapBasis names the heap a series measures, as every view names it:
// the trace's live heap (inside its windows), or the heap profiles' in
// use.
func heapBasis(from string) string {
	if from == "trace" {
		return "live heap (trace windows)"
	}
	return "heap in use (heap profiles)"
}

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
