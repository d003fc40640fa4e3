package analysis

import "time"

// config is [Options] with the defaults filled in.
type config struct {
	rules    []Rule
	minScore float64
	maxGoids int
	now      time.Time
	userCode []string
	timeout  time.Duration
	maxHeap  int64
}
