package analysis

import (
	"math"
	"slices"
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

// toInt64 copies a map of counts into int64s, as the report carries them.
func toInt64(m map[string]int) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = int64(v)
	}
	return out
}

// round rounds x to digits decimal places.
func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// intHeap is a min-heap of ints for container/heap.
type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// memberSet narrows a parted site's groups to its own members of the
// latest snapshot: those among goids (in), or those not among them.
type memberSet struct {
	goids []int64 // sorted
	in    bool
}

// has reports whether goroutine goid is a member.
func (m *memberSet) has(goid int64) bool {
	if m == nil {
		return true
	}
	_, found := slices.BinarySearch(m.goids, goid)
	return found == m.in
}
