package analysis

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/leakscope/leakscope/internal/format"
)

// estimateOnset intersects every bound the facts give and takes the
// estimate of the most precise one, clamped into the intersection.
func estimateOnset(f onsetFacts) *Onset {
	first := -1
	for i, x := range f.v {
		if x > 0 {
			first = i
			break
		}
	}
	if first < 0 {
		return nil
	}
	seen := f.ts[first]
	bounds := []bound{{hi: seen, basis: OnsetFirstSeen, at: seen, why: "first seen at " + clock(seen)}}
	l := fitLine(f.ts, f.v)
	if first > 0 {
		bounds = append(bounds, appearedBound(f, first))
	} else if f.fit.Points >= 3 && f.fit.R2 >= 0.5 {
		if at, ok := l.zeroAt(l.slope); ok && at < seen {
			b := bound{hi: seen, basis: OnsetFit, at: at, why: fmt.Sprintf("the growth line (R²=%.2f) reaches zero at %s", f.fit.R2, clock(at))}
			if hiAt, ok := l.zeroAt(l.slope + 2*l.slopeErr); ok {
				b.hi = min(seen, hiAt)
			}
			if loAt, ok := l.zeroAt(l.slope - 2*l.slopeErr); ok {
				b.lo = loAt
			}
			bounds = append(bounds, b)
		}
	}
	if f.wait > 0 && f.waitTS != 0 {
		hi := f.waitTS - f.wait*int64(time.Minute)
		bounds = append(bounds, bound{lo: hi - int64(time.Minute), hi: hi, basis: OnsetLongestWait, at: hi,
			why: fmt.Sprintf("a member had waited %s at %s", format.Count(f.wait, "minute"), clock(f.waitTS))})
	}
	if f.traceFirst != 0 {
		b := bound{hi: f.traceFirst, basis: OnsetTraceCreation, why: "a member seen alive was created at " + clock(f.traceFirst)}
		// The creation is the onset itself when it falls where the group
		// appeared between two snapshots.
		if first > 0 && f.traceFirst > f.ts[first-1] && f.traceFirst <= seen {
			b.at = f.traceFirst
		}
		bounds = append(bounds, b)
	}
	if f.start == 0 {
		return combine(bounds, "no lower bound: the process's start is unknown")
	}
	// Nothing of the process began before it: the start bounds every
	// estimate from below, and an upper bound earlier than it (a growth
	// line extrapolated too far, a trace mapped by another clock) is
	// dropped rather than the start.
	why := "the process started at " + clock(f.start)
	if f.startFrom != "" {
		why += " (" + f.startFrom + ")"
	}
	kept := []bound{}
	var dropped []string
	for _, b := range bounds {
		if b.hi != 0 && b.hi < f.start && b.basis != OnsetFirstSeen {
			dropped = append(dropped, b.basis)
			continue
		}
		kept = append(kept, b)
	}
	kept = append(kept, bound{lo: f.start, basis: OnsetProcessStart, at: f.start, why: why})
	note := ""
	if len(dropped) > 0 {
		note = "dropped as earlier than the process start: " + strings.Join(dropped, ", ")
	}
	return combine(kept, note)
}

// appearedBound is the bound of a series absent at the snapshot before
// its first sighting (index first > 0): between the two, refined by
// the growth rate (count k at first sight, growing at slope/min, began
// about k/slope before), read from the agent's history when that
// snapshot is one, and widened for a heap site not sampled there.
func appearedBound(f onsetFacts, first int) bound {
	seen := f.ts[first]
	b := bound{lo: f.ts[first-1], hi: seen, basis: OnsetAppeared, at: seen,
		why: fmt.Sprintf("absent at %s, present at %s", clock(f.ts[first-1]), clock(seen))}
	if f.fit.Slope > 0 {
		back := int64(f.v[first] / f.fit.Slope * 60e9)
		b.at = max(b.lo, seen-back)
	}
	if first-1 < f.hist {
		historyBound(&b, f)
	}
	if f.unsampled > 0 {
		notSampledBound(&b, f, first)
	}
	return b
}

// combine intersects the bounds and picks the estimate; note, if any,
// ends the detail.
func combine(bounds []bound, note string) *Onset {
	var lo, hi int64
	var whys []string
	for _, b := range bounds {
		if b.lo != 0 && b.lo > lo {
			lo = b.lo
		}
		if b.hi != 0 && (hi == 0 || b.hi < hi) {
			hi = b.hi
		}
		whys = append(whys, b.why)
	}
	conflict := lo != 0 && hi != 0 && lo > hi
	if conflict {
		lo = 0 // the bounds disagree (clocks of different sources): keep the upper one
	}
	pick := bounds[0]
	for _, basis := range []string{OnsetTraceCreation, OnsetHistory, OnsetAppeared, OnsetLongestWait, OnsetFit, OnsetProcessStart} {
		if b, ok := find(bounds, basis); ok && b.at != 0 {
			pick = b
			break
		}
	}
	at := pick.at
	if lo != 0 && at < lo {
		at = lo
	}
	if hi != 0 && at > hi {
		at = hi
	}
	detail := strings.Join(whys, "; ")
	if conflict {
		detail += "; the lower bounds are later than the upper ones, so only the latter are kept"
	}
	if note != "" {
		detail += "; " + note
	}
	return &Onset{At: tsTime(at), Earliest: tsTime(lo), Latest: tsTime(hi), Basis: pick.basis, Detail: detail}
}

func find(bounds []bound, basis string) (bound, bool) {
	for _, b := range bounds {
		if b.basis == basis {
			return b, true
		}
	}
	return bound{}, false
}

// goroutineOnset estimates when a goroutine group began.
func goroutineOnset(in *loaded, x *candidate) *Onset {
	f := onsetFacts{ts: in.tsOf(x.s), v: x.s.counts, fit: x.sc.rate, wait: x.s.maxWait, waitTS: x.s.maxWaitTS,
		hist: x.s.histPoints, until: in.hist.until, histProfile: "goroutine"}
	f.start, f.startFrom = processStart(in)
	if x.trace != nil {
		f.traceFirst = x.trace.firstAlive
	}
	return estimateOnset(f)
}

// heapOnset estimates when a heap site began to grow. A sampled heap
// profile that does not list the site says it was not sampled, not that
// it was absent (see notSampledBound).
func heapOnset(in *loaded, h *heapSite) *Onset {
	g := h.grower
	ts := make([]int64, len(g.Series))
	v := make([]float64, len(g.Series))
	for i, p := range g.Series {
		ts[i], v[i] = p.TS.UnixNano(), p.Value
	}
	f := onsetFacts{ts: ts, v: v, fit: g.Fit, hist: in.hist.heapPoints(ts), until: in.hist.until, histProfile: "heap",
		unsampled: unsampledBytes(h.weight), rate: samplingPeriod(ts, in.periods)}
	f.start, f.startFrom = processStart(in)
	return estimateOnset(f)
}

// unsampledOdds is how rarely a site holding unsampledBytes is left out
// of a heap profile: 1 time in 100.
const unsampledOdds = 100

// unsampledBytes is the most a site whose samples each stand for weight
// bytes can hold and still be left out of a heap profile but 1 time in
// unsampledOdds: a site holding B bytes in small objects has about
// B/weight samples expected, and none with probability exp(−B/weight).
func unsampledBytes(weight float64) float64 {
	return weight * math.Log(unsampledOdds)
}

// notSampledBound widens an "appeared" bound of a heap site: the
// snapshot that does not list it saw it not sampled, holding less than
// f.unsampled then, so at the growth the fit gives it may have begun
// f.unsampled/slope before that snapshot (no lower bound without a
// rising fit).
func notSampledBound(b *bound, f onsetFacts, first int) {
	absent := f.ts[first-1]
	b.lo = 0
	if f.fit.Slope > 0 {
		perNs := f.fit.Slope / 60e9
		b.lo = absent - int64(f.unsampled/perNs)
		b.at = max(b.lo, f.ts[first]-int64(f.v[first]/perNs))
	}
	b.why = fmt.Sprintf("not sampled at %s (a heap profile at MemProfileRate %s leaves out a site holding up to %s but 1 time in %d), present at %s",
		clock(absent), format.Bytes(float64(f.rate)), format.Bytes(f.unsampled), unsampledOdds, clock(f.ts[first]))
	if b.lo != 0 {
		b.why += fmt.Sprintf("; growing %s, it may have begun %s before", FormatRate(f.fit.Slope, KindHeap), format.Duration(time.Duration(absent-b.lo)))
	}
}

// processStart is the target's start from the manifest, and where the
// capture read it.
func processStart(in *loaded) (int64, string) {
	t := in.b.Manifest.Target
	if t.ProcessStart.IsZero() {
		return 0, ""
	}
	return t.ProcessStart.UnixNano(), t.ProcessStartFrom
}
