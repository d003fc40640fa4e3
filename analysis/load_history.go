package analysis

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/internal/format"
)

// history is the agent's earlier goroutine profiles in a bundle
// (artifacts of role history), before the first dump.
type history struct {
	ts []int64 // snapshot times, sorted
	// heap are the times of its heap profiles.
	heap map[int64]bool
	// until is the first dump's time: the capture proper begins there.
	until int64
}

// historyOf finds the complete history goroutine profiles older than the
// first dump.
func historyOf(m bundle.Manifest, dumps []int64) history {
	if len(dumps) == 0 {
		return history{}
	}
	h := history{until: dumps[0], heap: map[int64]bool{}}
	seen := map[int64]bool{}
	for _, a := range m.Artifacts {
		ts := a.Time.UnixNano()
		if a.Role == bundle.RoleHistory && a.Profile == "heap" && a.Status == bundle.StatusComplete && ts < h.until {
			h.heap[ts] = true
		}
		if a.Role == bundle.RoleHistory && a.Profile == "goroutine" && a.Status == bundle.StatusComplete && ts < h.until && !seen[ts] {
			seen[ts] = true
			h.ts = append(h.ts, ts)
		}
	}
	sort.Slice(h.ts, func(i, j int) bool { return h.ts[i] < h.ts[j] })
	return h
}

// stackKey is the part of a stack dumps and goroutine profiles both
// show: the frames (function and line) without the runtime's at the leaf
// and the root, which a dump leaves out and a profile keeps.
func stackKey(frames []Frame) string {
	lo, hi := 0, len(frames)
	for lo < hi && isRuntime(frames[lo].Function) {
		lo++
	}
	for hi > lo && isRuntime(frames[hi-1].Function) {
		hi--
	}
	var b strings.Builder
	for _, f := range frames[lo:hi] {
		b.WriteString(f.Function)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(f.Line))
		b.WriteByte('\n')
	}
	return b.String()
}

// addHistory lays the history's goroutine profile counts before the dump
// counts of every site its stacks match: a site whose dump groups' stacks
// are found in the history (and are no other site's) gets its own
// snapshot times, the history's followed by the dumps'. A site the
// history never shows keeps the dumps alone: a stack that matched nothing
// says nothing about when the site began.
func (in *loaded) addHistory() {
	in.hist = historyOf(in.b.Manifest, in.d.snapshots)
	if len(in.hist.ts) == 0 {
		return
	}
	owner := map[string]*site{}
	shared := map[string]bool{}
	for _, s := range in.sites {
		for _, g := range s.groups {
			k := stackKey(in.st.framesOf(g.key.stackID))
			if o := owner[k]; o != nil && o != s || k == "" {
				shared[k] = true
			}
			owner[k] = s
		}
	}
	idx := make(map[int64]int, len(in.hist.ts))
	for i, ts := range in.hist.ts {
		idx[ts] = i
	}
	counts := map[*site][]float64{}
	stacks := make([]int64, 0, len(in.prof.Goroutine))
	for stack := range in.prof.Goroutine {
		stacks = append(stacks, stack)
	}
	sort.Slice(stacks, func(i, j int) bool { return stacks[i] < stacks[j] })
	for _, stack := range stacks {
		k := stackKey(in.st.framesOf(stack))
		s := owner[k]
		if s == nil || shared[k] {
			continue
		}
		c := counts[s]
		if c == nil {
			c = make([]float64, len(in.hist.ts))
			counts[s] = c
		}
		for ts, v := range in.prof.Goroutine[stack] {
			if i, ok := idx[ts]; ok {
				c[i] += float64(v[0])
			}
		}
	}
	for s, c := range counts {
		if !anyPositive(c) {
			continue
		}
		s.ts = append(append([]int64{}, in.hist.ts...), in.ts...)
		s.counts = append(c, s.counts...)
		s.histPoints = len(c)
	}
}

func anyPositive(v []float64) bool {
	for _, x := range v {
		if x > 0 {
			return true
		}
	}
	return false
}

// tsOf is the snapshot times a site's counts lie on: the bundle's, or,
// with history, its own.
func (in *loaded) tsOf(s *site) []int64 {
	if s.ts != nil {
		return s.ts
	}
	return in.ts
}

// historyBound turns an "appeared" bound whose last absence is in the
// agent's history into a history bound, saying how long before the
// capture it was.
func historyBound(b *bound, f onsetFacts) {
	b.basis = OnsetHistory
	b.why = fmt.Sprintf("absent from the agent's history (%s profile) at %s, present at %s", f.histProfile, clock(b.lo), clock(b.hi))
	if f.until > b.hi {
		b.why += fmt.Sprintf(", %s before the capture began", format.Duration(time.Duration(f.until-b.hi)))
	}
}

// historyTotals is the goroutine total of every history snapshot before
// the dumps (nil without dumps: the profiles are then the series).
func historyTotals(in *loaded) []Point {
	if in.d.rows == 0 || len(in.hist.ts) == 0 {
		return nil
	}
	tot := make(map[int64]int64, len(in.hist.ts))
	for _, m := range in.prof.Goroutine {
		for ts, v := range m {
			tot[ts] += v[0]
		}
	}
	out := make([]Point, 0, len(in.hist.ts))
	for _, ts := range in.hist.ts {
		out = append(out, Point{TS: tsTime(ts), Value: float64(tot[ts])})
	}
	return out
}

// historyUsed reports whether some site's counts reach into the history.
func (in *loaded) historyUsed() bool {
	for _, s := range in.sites {
		if s.histPoints > 0 {
			return true
		}
	}
	return false
}

// heapPoints is how many of the first times ts are heap profiles of the
// history.
func (h history) heapPoints(ts []int64) int {
	n := 0
	for n < len(ts) && h.heap[ts[n]] {
		n++
	}
	return n
}

// onsetFacts are what the bundle says about when a series began.
type onsetFacts struct {
	ts    []int64   // snapshot times
	v     []float64 // the series on them
	fit   Fit
	start int64 // process start (0: unknown)
	// startFrom says where start comes from ("/proc/123/stat").
	startFrom string
	wait      int64 // longest wait in minutes (0: none reported)
	waitTS    int64 // the snapshot it was reported in
	// traceFirst is the earliest creation of a member seen alive in a
	// trace window (0: none).
	traceFirst int64
	// hist is how many of the first snapshots are profiles of the
	// agent's history (of kind histProfile); until is when the capture
	// proper began.
	hist        int
	until       int64
	histProfile string // "goroutine" or "heap"
	// unsampled, for a heap site, is the most it can hold and still be
	// left out of a sampled heap profile, but 1 time in 100 (0: a series
	// whose absence is absence, as a dump's); rate the profiles'
	// MemProfileRate.
	unsampled float64
	rate      int64
}

// bound is one interval the onset lies in, with what it rests on.
type bound struct {
	lo, hi int64 // 0: open
	basis  string
	at     int64 // the estimate this evidence gives (0: none)
	why    string
}

// clock formats a time as reports print it.
func clock(ns int64) string {
	return tsTime(ns).Format("2006-01-02 15:04:05.000") + " UTC"
}
