package flame

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/leakscope/leakscope/ingest/schema"
)

// Sources a tree can be built from.
const (
	// SourceSamples reads the samples table (pprof profiles).
	SourceSamples = "samples"
	// SourceGoroutines reads the goroutines table (goroutine dumps): one
	// unit of "count" per goroutine.
	SourceGoroutines = "goroutines"
)

// ErrNoSnapshot is wrapped by the errors of queries that select no
// snapshot (no data for the profile, or no snapshot at the requested time).
var ErrNoSnapshot = errors.New("no such snapshot")

// Query selects what a tree shows. The zero Query is the latest goroutine
// profile.
type Query struct {
	// Profile is one of the schema.Profile* names; "" means goroutine.
	Profile string
	// Value is the samples column to sum; "" picks [DefaultValue].
	Value string
	// Snapshot is a snapshot_ts in Unix ns; 0 means the latest.
	Snapshot int64
	// From and To bound a range of snapshots (inclusive, Unix ns, 0 =
	// open). They exclude Snapshot. See the package doc for how a range
	// is combined.
	From, To int64
	// Base, when non-zero, is the snapshot_ts whose values are subtracted.
	Base int64
	// Focus keeps only stacks with a frame matching one of these regular
	// expressions (function or file name); Ignore drops stacks with one.
	Focus, Ignore []string
	// Invert builds the callers tree, starting from the leaves.
	Invert bool
	// Goids restricts a goroutines-table tree to these goroutines; it
	// implies Source = SourceGoroutines.
	Goids []int64
	// Stacks, when set, restricts the tree to rows with these stack ids
	// (the allocation stacks of one heap site, say); other rows still take
	// part in choosing the snapshot, with weight zero.
	Stacks []int64
	// Source is SourceSamples or SourceGoroutines. "" means samples, except
	// that a goroutine query on a bundle without goroutine samples falls
	// back to the goroutines table.
	Source string
	// HideOwn leaves out the stacks of the capture's own machinery in the
	// target (pprof and runtime/trace requests, see [Own]); the tree says
	// what they held (Tree.OwnHidden). Otherwise their nodes are marked.
	HideOwn bool
}

// DefaultValue returns the sample column a profile is shown by default.
func DefaultValue(profile string) string {
	switch profile {
	case schema.ProfileHeap:
		return schema.ColInuseSpace
	case schema.ProfileAllocs:
		return schema.ColAllocSpace
	case schema.ProfileCPU:
		return schema.ColCPUNanosecs
	case schema.ProfileBlock, schema.ProfileMutex:
		return schema.ColDelay
	default:
		return schema.ColCount
	}
}

// Values returns the sample columns a profile has, its default first:
// what a view offers to sum (pprof's -sample_index).
func Values(profile string) []string {
	switch profile {
	case schema.ProfileHeap:
		return []string{schema.ColInuseSpace, schema.ColInuseObjects, schema.ColAllocSpace, schema.ColAllocObjects}
	case schema.ProfileAllocs:
		return []string{schema.ColAllocSpace, schema.ColAllocObjects, schema.ColInuseSpace, schema.ColInuseObjects}
	case schema.ProfileCPU:
		return []string{schema.ColCPUNanosecs, schema.ColSamplesCount}
	case schema.ProfileBlock, schema.ProfileMutex:
		return []string{schema.ColDelay, schema.ColContentions}
	}
	return []string{schema.ColCount}
}

// Cumulative reports whether a profile's value column counts from process
// start (so two snapshots are subtracted rather than summed).
func Cumulative(profile, value string) bool {
	switch profile {
	case schema.ProfileAllocs, schema.ProfileBlock, schema.ProfileMutex, schema.ProfileThreadcreate:
		return true
	case schema.ProfileHeap:
		return value == schema.ColAllocSpace || value == schema.ColAllocObjects
	}
	return false
}

// Unit returns the unit of a value column: "bytes", "nanoseconds" or
// "count".
func Unit(value string) string {
	switch value {
	case schema.ColInuseSpace, schema.ColAllocSpace:
		return "bytes"
	case schema.ColCPUNanosecs, schema.ColDelay:
		return "nanoseconds"
	}
	return "count"
}

var profileNames = []string{
	schema.ProfileGoroutine, schema.ProfileHeap, schema.ProfileAllocs, schema.ProfileCPU,
	schema.ProfileBlock, schema.ProfileMutex, schema.ProfileThreadcreate, schema.ProfileGoroutineLeak,
}

// normalized is a validated query with its defaults filled in.
type normalized struct {
	Query
	valueCol   int // index into schema.ValueColumns
	cumulative bool
	rangeMode  bool
	focus      []*regexp.Regexp
	ignore     []*regexp.Regexp
	goids      map[int64]struct{}
	stacks     map[int64]struct{}
}

func normalize(q Query) (*normalized, error) {
	n := &normalized{Query: q}
	if n.Profile == "" {
		n.Profile = schema.ProfileGoroutine
	}
	known := false
	for _, p := range profileNames {
		known = known || p == n.Profile
	}
	if !known {
		return nil, fmt.Errorf("unknown profile %q (want one of %s)", n.Profile, strings.Join(profileNames, ", "))
	}
	if len(n.Goids) > 0 {
		if n.Source == SourceSamples {
			return nil, fmt.Errorf("goids select goroutines of a dump; they need source %q, not %q", SourceGoroutines, SourceSamples)
		}
		n.Source = SourceGoroutines
	}
	switch n.Source {
	case "", SourceSamples:
	case SourceGoroutines:
		if n.Profile != schema.ProfileGoroutine {
			return nil, fmt.Errorf("source %q holds goroutines, not a %s profile", SourceGoroutines, n.Profile)
		}
	default:
		return nil, fmt.Errorf("unknown source %q (want %q or %q)", n.Source, SourceSamples, SourceGoroutines)
	}
	if n.Value == "" {
		n.Value = DefaultValue(n.Profile)
	}
	n.valueCol = -1
	for i, c := range schema.ValueColumns {
		if c == n.Value {
			n.valueCol = i
		}
	}
	if n.valueCol < 0 {
		return nil, fmt.Errorf("unknown sample value %q (want one of %s)", n.Value, strings.Join(schema.ValueColumns, ", "))
	}
	if n.Source == SourceGoroutines && n.Value != schema.ColCount {
		return nil, fmt.Errorf("source %q only has the value %q, not %q", SourceGoroutines, schema.ColCount, n.Value)
	}
	n.rangeMode = n.From != 0 || n.To != 0
	if n.rangeMode && n.Snapshot != 0 {
		return nil, fmt.Errorf("snapshot and from/to are exclusive")
	}
	if n.To != 0 && n.From > n.To {
		return nil, fmt.Errorf("empty range: from %d is after to %d", n.From, n.To)
	}
	n.cumulative = Cumulative(n.Profile, n.Value)
	var err error
	if n.focus, err = compileAll("focus", n.Focus); err != nil {
		return nil, err
	}
	if n.ignore, err = compileAll("ignore", n.Ignore); err != nil {
		return nil, err
	}
	if len(n.Goids) > 0 {
		n.goids = make(map[int64]struct{}, len(n.Goids))
		for _, g := range n.Goids {
			n.goids[g] = struct{}{}
		}
	}
	if len(n.Stacks) > 0 {
		n.stacks = make(map[int64]struct{}, len(n.Stacks))
		for _, id := range n.Stacks {
			n.stacks[id] = struct{}{}
		}
	}
	return n, nil
}

// keepStack reports whether a row of stack st counts.
func (n *normalized) keepStack(st int64) bool {
	if n.stacks == nil {
		return true
	}
	_, ok := n.stacks[st]
	return ok
}

func compileAll(what string, exprs []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, e := range exprs {
		if e == "" {
			continue
		}
		re, err := regexp.Compile(e)
		if err != nil {
			return nil, fmt.Errorf("%s expression %q: %w", what, e, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// inRange reports whether ts lies in the query's range.
func (n *normalized) inRange(ts int64) bool {
	return ts >= n.From && (n.To == 0 || ts <= n.To)
}
