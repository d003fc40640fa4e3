package analysis

import (
	"github.com/leakscope/leakscope/internal/format"
	"sort"
	"strings"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// Plural writes a count with its noun for people: "1 goroutine",
// "2 goroutines", "2.5 minutes". Every view (CLI, reports, the workbench's
// answers) words counts through it.
func Plural(n float64, noun string) string { return plural(n, noun) }

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
		val := thousands(v)
		if strings.HasSuffix(k, "_bytes") {
			val = FormatBytes(float64(v))
		}
		parts = append(parts, strings.ReplaceAll(k, "_", " ")+" "+val)
	}
	return strings.Join(parts, " · ")
}

// thousands writes an integer with comma thousands separators.
func thousands(v int64) string { return format.Int(v) }

// FormatDuration writes a length of time for people, to the second:
// "25 s", "1 minute", "4 minutes 10 s" ([format.Duration]).
func FormatDuration(d time.Duration) string { return format.Duration(d) }
