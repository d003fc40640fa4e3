package flame

// acc sums values per stack id for the snapshots one selector picks.
type acc struct {
	vals  []int64 // by stack id
	ts    int64   // snapshot of the values (latest/earliest/exact selectors)
	found bool
}

func (a *acc) add(stack, v int64) {
	if stack >= int64(len(a.vals)) {
		a.vals = append(a.vals, make([]int64, int(stack)+1-len(a.vals))...)
	}
	a.vals[stack] += v
}

func (a *acc) reset(ts int64) {
	clear(a.vals)
	a.ts = ts
	a.found = true
}

// selector routes each (snapshot, stack, value) row of one profile to the
// accumulators the query needs. It reads rows in any order: rows of a
// newer latest snapshot discard the sums of the older one.
type selector struct {
	q *normalized

	cur    acc // single mode: the exact or latest snapshot; range: the latest in range (cumulative)
	first  acc // cumulative range: the earliest snapshot in range
	sum    acc // instant range: sum of the snapshots in range
	base   acc // Base snapshot
	seen   map[int64]struct{}
	lastTS int64

	rows, nonNull int64 // rows of the profile, and those with a value

	// unknown is the one stack id that stands for every id outside the
	// stacks table (negative or too large), so corrupt ids cannot make
	// the accumulators huge.
	unknown int64
}

func newSelector(q *normalized, numStacks int) *selector {
	return &selector{q: q, seen: map[int64]struct{}{}, lastTS: -1, unknown: int64(numStacks)}
}

// row feeds one row of the selected profile; ok is false for a null value.
func (s *selector) row(ts, stack, v int64, ok bool) {
	s.rows++
	if ts != s.lastTS {
		s.lastTS = ts
		s.seen[ts] = struct{}{}
	}
	if !ok {
		return
	}
	s.nonNull++
	if stack < 0 || stack > s.unknown {
		stack = s.unknown
	}
	q := s.q
	if q.Base != 0 && ts == q.Base {
		s.base.found = true
		s.base.ts = ts
		s.base.add(stack, v)
	}
	switch {
	case !q.rangeMode && q.Snapshot != 0:
		if ts == q.Snapshot {
			s.cur.found, s.cur.ts = true, ts
			s.cur.add(stack, v)
		}
	case !q.rangeMode:
		latest(&s.cur, ts, stack, v)
	case !q.inRange(ts):
	case q.cumulative:
		latest(&s.cur, ts, stack, v)
		earliest(&s.first, ts, stack, v)
	default:
		if !s.sum.found || ts > s.sum.ts {
			s.sum.ts = ts
		}
		s.sum.found = true
		s.sum.add(stack, v)
	}
}

func latest(a *acc, ts, stack, v int64) {
	if !a.found || ts > a.ts {
		a.reset(ts)
	} else if ts < a.ts {
		return
	}
	a.add(stack, v)
}

func earliest(a *acc, ts, stack, v int64) {
	if !a.found || ts < a.ts {
		a.reset(ts)
	} else if ts > a.ts {
		return
	}
	a.add(stack, v)
}
