// Package benchstat holds the small statistics leakscope's benchmarks
// report: they run side by side with a reference on a shared machine and
// print medians over rounds, which one slow round does not move.
package benchstat

import "slices"

// Median returns the median of v (0 for none).
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
