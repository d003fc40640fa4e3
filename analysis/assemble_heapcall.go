package analysis

import (
	"fmt"
	"math"

	"github.com/leakscope/leakscope/internal/format"
)

// minHeapSamples is how many heap profile samples the in-use rise of an
// incident's allocation sites must stand for before a heap figure per
// call is given: below it one sample more or less changes the figure by
// more than a tenth.
const minHeapSamples = 10

// add counts one allocation site's rise.
func (r *heapRise) add(h *heapSite) {
	r.sites++
	if h.rise > 0 {
		r.bytes += h.rise
	}
	r.weight = math.Max(r.weight, h.weight)
	if g := h.grower.Range; g != nil {
		r.minutes = math.Max(r.minutes, g.To.Sub(g.From).Minutes())
	}
}

// join adds another suspect's sites.
func (r *heapRise) join(o heapRise) {
	r.bytes += o.bytes
	r.sites += o.sites
	r.weight = math.Max(r.weight, o.weight)
	r.minutes = math.Max(r.minutes, o.minutes)
}

// heapPerCall is the in-use rise of an incident's allocation sites per
// call over the heap snapshots, its bound (two standard errors of the
// rise from sampling: the rise is a count of samples of the weight), and
// the text saying both or why they are not given.
func heapPerCall(r heapRise, callsPerMin float64) (perCall, bound float64, text string) {
	switch {
	case r.sites == 0:
		return 0, 0, "heap per call unknown: no allocation site of the heap profiles is attributed to it (or the bundle has no heap profiles)"
	case r.minutes <= 0 || callsPerMin <= 0:
		return 0, 0, "heap per call unknown: the heap snapshots span no time"
	case r.bytes <= 0:
		return 0, 0, "no heap rise measured at its allocation sites"
	}
	samples := r.bytes / r.weight
	if samples < minHeapSamples {
		return 0, 0, fmt.Sprintf("heap per call unknown: its allocation sites rose by %s, < %d heap samples of %s each; capture longer, or raise the sampling rate (runtime.MemProfileRate = 64 << 10 in the target)",
			format.Bytes(r.bytes), minHeapSamples, format.Bytes(r.weight))
	}
	calls := callsPerMin * r.minutes
	perCall = math.Round(r.bytes / calls)
	bound = math.Round(2 * math.Sqrt(r.bytes*r.weight) / calls)
	return perCall, bound, fmt.Sprintf("~%s ± %s of heap per call (in-use rise of %d allocation sites over %.1f min, %.0f calls; ± two standard errors of heap sampling)",
		format.Bytes(perCall), format.Bytes(bound), r.sites, r.minutes, calls)
}
