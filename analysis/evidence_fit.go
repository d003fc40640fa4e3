package analysis

import "math"

// fitSeries fits a least-squares line through (ts, v) pairs, ts in Unix
// nanoseconds, and reports the slope per minute, R² and the share of steps
// that do not go down.
func fitSeries(ts []int64, v []float64) Fit {
	n := len(ts)
	f := Fit{Points: n}
	if n < 2 {
		return f
	}
	l := fitLine(ts, v)
	f.Slope, f.R2 = l.slope, l.r2
	up := 0
	for i := 1; i < n; i++ {
		if v[i] >= v[i-1] {
			up++
		}
	}
	f.Monotone = float64(up) / float64(n-1)
	f.Slope = round(f.Slope, 4)
	f.R2 = round(f.R2, 4)
	f.Monotone = round(f.Monotone, 4)
	return f
}

// line is a least-squares line v = a + slope·(t − t0) over minutes since
// t0, with the standard error of its slope.
type line struct {
	t0        int64
	a, slope  float64
	r2        float64
	slopeErr  float64 // standard error of the slope (0 with fewer than 3 points)
	meanT     float64 // minutes since t0
	meanV     float64
	hasSpread bool // the times are not all equal
}

// fitLine fits the least-squares line through (ts, v).
func fitLine(ts []int64, v []float64) line {
	n := len(ts)
	l := line{t0: ts[0]}
	var sx, sy float64
	for i := range ts {
		sx += float64(ts[i]-l.t0) / 60e9
		sy += v[i]
	}
	l.meanT, l.meanV = sx/float64(n), sy/float64(n)
	var sxx, sxy, syy float64
	for i := range ts {
		dx := float64(ts[i]-l.t0)/60e9 - l.meanT
		dy := v[i] - l.meanV
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx > 0 {
		l.hasSpread = true
		l.slope = sxy / sxx
		if syy > 0 {
			l.r2 = sxy * sxy / (sxx * syy)
		}
		if n > 2 {
			res := math.Max(0, syy-l.slope*sxy)
			l.slopeErr = math.Sqrt(res / float64(n-2) / sxx)
		}
	}
	l.a = l.meanV - l.slope*l.meanT
	return l
}

// zeroAt returns when a line with the given slope through the series'
// mean reaches zero, in Unix nanoseconds; ok is false for slopes not
// above zero.
func (l line) zeroAt(slope float64) (int64, bool) {
	if slope <= 0 {
		return 0, false
	}
	minutes := l.meanT - l.meanV/slope
	return l.t0 + int64(minutes*60e9), true
}

func clamp01(x float64) float64 { return math.Max(0, math.Min(1, x)) }

// recentGrowth compares the rise over the last third of a series with
// the share of the whole rise a steady trend puts there, from 0 (flat or
// falling at the end: a pool that filled up, a burst that stopped) to 1
// (still growing as fast). It goes by snapshot index, not time, so jitter
// in when snapshots were taken does not count as a slowdown.
func recentGrowth(v []float64) float64 {
	n := len(v)
	if n < 3 {
		return 0
	}
	k := n - 1 - max(1, (n-1)/3)
	want := (v[n-1] - v[0]) * float64(n-1-k) / float64(n-1)
	if want <= 0 {
		return 0
	}
	return clamp01((v[n-1] - v[k]) / want)
}

// namedRange is the index of the first snapshot of the range a series'
// rate is reported over: from its first sighting (a group that appears
// during the capture grows from there, and the snapshots before, when it
// did not exist yet, would bend the line), or, with fewer than three
// sightings, from the last snapshot before them.
func namedRange(v []float64) int {
	lo := 0
	for lo < len(v) && v[lo] <= 0 {
		lo++
	}
	if lo == len(v) {
		return 0
	}
	if len(v)-lo < 3 && lo > 0 {
		lo--
	}
	return lo
}
