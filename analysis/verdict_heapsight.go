package analysis

import (
	"fmt"
	"math"
	"time"

	"github.com/leakscope/leakscope/internal/format"
)

// heapSight is the slowest heap growth the bundle's heap profiles can
// name: the rise a site growing steadily over their snapshots needs to
// clear its floor (heapFloor, at the profiles' sampling rate, for small
// objects), over their span; nil with fewer than three heap snapshots.
func heapSight(ts []int64, periods map[int64]int64) *HeapSight {
	if len(ts) < 3 || ts[len(ts)-1] <= ts[0] {
		return nil
	}
	rate := samplingPeriod(ts, periods)
	span := float64(ts[len(ts)-1]-ts[0]) / 1e9
	rise := func(r float64) []float64 {
		v := make([]float64, len(ts))
		for i, t := range ts {
			v[i] = r * float64(t-ts[0]) / float64(ts[len(ts)-1]-ts[0])
		}
		return v
	}
	// The floor grows more slowly than the rise: the least rise that
	// clears it, by bisection between one sample's weight and a bound
	// that always does.
	lo, hi := float64(rate), float64(rate)
	for f, _ := heapFloor(ts, rise(hi), float64(rate), rate); f > hi; f, _ = heapFloor(ts, rise(hi), float64(rate), rate) {
		lo, hi = hi, 2*hi
	}
	for range 40 {
		mid := (lo + hi) / 2
		if f, _ := heapFloor(ts, rise(mid), float64(rate), rate); f > mid {
			lo = mid
		} else {
			hi = mid
		}
	}
	hs := &HeapSight{MemProfileRate: rate, Seconds: round(span, 1), MinRise: math.Ceil(hi), MinPerMin: round(hi/span*60, 0)}
	hs.Text = sightText(hs)
	return hs
}

// sightText says what a capture's heap profiles cannot see, and what
// would show it: a longer capture (the rise needed grows with the rate,
// not the time) or a finer MemProfileRate (the rise needed shrinks with
// it), for a site growing a quarter as fast as the slowest seen.
func sightText(hs *HeapSight) string {
	g := hs.MinPerMin / 4
	longer := time.Duration(hs.MinRise / g * float64(time.Minute)).Round(time.Second)
	finer := int64(float64(hs.MemProfileRate) / 4)
	return fmt.Sprintf("heap profiles at MemProfileRate %s over %s name a site only once it has risen about %s (its sampling floor): one growing slower than %s stays unseen. A site growing %s needs a capture of %s at this rate, or runtime.MemProfileRate %d (%s) for one this long",
		format.Bytes(float64(hs.MemProfileRate)), format.Duration(time.Duration(hs.Seconds*1e9)), format.Bytes(hs.MinRise), FormatRate(hs.MinPerMin, KindHeap),
		FormatRate(g, KindHeap), format.Duration(longer), finer, format.Bytes(float64(finer)))
}
