package gotrace

import (
	"fmt"
	"strconv"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// Manifest counters of the trace source (summed over windows).
const (
	CounterEvents      = "events"
	CounterGenerations = "generations"
	CounterGoroutines  = "goroutines"
	CounterTransitions = "transitions"
	CounterSpans       = "spans"
)

// record fills the artifact and the manifest once the trace is read.
// readErr is the reader's error (nil at a clean end), consumed the number
// of input bytes the reader had consumed.
func (h *handler) record(w *bundle.Writer, a *bundle.Artifact, version int, readErr error, consumed int64) error {
	var total int64
	for _, n := range h.rows {
		total += n
	}
	a.Rows = total
	gens := max(h.syncs-1, 0)
	a.Status = bundle.StatusComplete
	a.Detail = ""
	if readErr != nil {
		a.Status = bundle.StatusTruncated
		where := "before the first complete generation"
		if gens > 0 {
			where = fmt.Sprintf("after %d complete generation(s) (events up to %s)", gens,
				time.Unix(0, h.clk.wall(h.last)).UTC().Format(time.RFC3339Nano))
		}
		a.Detail = fmt.Sprintf("trace stopped %s; input read to byte %d: %v", where, consumed, readErr)
	}
	start, end := h.clk.wall(h.first), h.clk.wall(h.last)
	if h.clk.set {
		a.Start, a.End = time.Unix(0, start).UTC(), time.Unix(0, end).UTC()
	}
	w.Update(func(m *bundle.Manifest) {
		src := m.Source(bundle.SourceTrace)
		if src.Settings == nil {
			src.Settings = map[string]string{}
		}
		src.Settings[SettingFormat] = fmt.Sprintf("go 1.%d", version)
		if h.clk.method != "" {
			src.Settings[SettingClock] = h.clk.method
		}
		if !h.clk.snap && h.clk.set {
			src.Settings[SettingOffsetNS] = strconv.FormatInt(h.clk.offset, 10)
		}
		if src.Counters == nil {
			src.Counters = map[string]int64{}
		}
		src.Counters[CounterEvents] += h.records
		src.Counters[CounterGenerations] += gens
		src.Counters[CounterGoroutines] += h.rows[schema.TableTraceGoroutines]
		src.Counters[CounterTransitions] += h.rows[schema.TableTraceTransitions]
		src.Counters[CounterSpans] += h.rows[schema.TableSpans]
		if a.Status == bundle.StatusTruncated {
			src.Status = bundle.StatusTruncated
			name := a.Name
			if name == "" {
				name = "trace"
			}
			if src.Detail != "" {
				src.Detail += "; "
			}
			src.Detail += name + ": " + a.Detail
		}
		if m.Clock.Method == "" && h.clk.method != "" {
			m.Clock.Method = "trace: " + h.clk.method
			if !h.clk.snap {
				m.Clock.OffsetNS = h.clk.offset
			}
			m.Clock.Detail = clockDetail(h.clk.method)
		}
		if h.clk.set {
			m.Widen(time.Unix(0, start).UTC())
			m.Widen(time.Unix(0, end).UTC())
		}
	})
	return nil
}

func clockDetail(method string) string {
	switch method {
	case ClockSnapshot:
		return "wall time from the trace's per-generation clock snapshots (Go 1.25+)"
	case ClockOffset:
		return "wall = trace time (CLOCK_MONOTONIC) + offset measured by capture"
	case ClockAnchoredEnd:
		return "no clock snapshot or offset: the trace's end was placed at the file's time; wall times are approximate"
	case ClockAnchoredStart:
		return "no clock snapshot or offset and unseekable input: the trace's start was placed at the file's time; wall times are approximate"
	}
	return ""
}
