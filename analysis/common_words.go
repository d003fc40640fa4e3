package analysis

import (
	"sort"
	"strings"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/internal/format"
)

// FormatRate formats a growth rate with its sign in the unit of the
// suspect's kind (bytes for heap): "+909/min",
// "+1.5 MiB/min", "-3.0/min" ([format.Rate], [format.ByteRate]).
func FormatRate(v float64, kind string) string {
	if kind == KindHeap {
		return format.ByteRate(v)
	}
	return format.Rate(v)
}

// SourceText describes one source of a bundle for people: its kind and
// status, why it ended that way, and its counters with sizes in binary
// units ("trace complete · events 22,010 · trace bytes 294.2 KiB").
func SourceText(s bundle.Source) string {
	parts := []string{s.Kind + " " + s.Status}
	if s.Detail != "" {
		parts[0] += ": " + s.Detail
	}
	keys := make([]string, 0, len(s.Counters))
	for k := range s.Counters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := s.Counters[k]
		val := format.Int(v)
		if strings.HasSuffix(k, "_bytes") {
			val = format.Bytes(float64(v))
		}
		parts = append(parts, strings.ReplaceAll(k, "_", " ")+" "+val)
	}
	return strings.Join(parts, " · ")
}

// clockTime formats a time as the evidence texts print it.
func clockTime(t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return t.UTC().Format("15:04:05.000")
}

// perMinute formats a rate for humans.
func perMinute(v float64) string { return format.Number(v) + "/min" }
