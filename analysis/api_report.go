package analysis

import (
	"regexp"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// Suspect kinds.
const (
	KindGoroutine = "goroutine"
	KindHeap      = "heap"
	// KindIncident is the kind of rules naming an [Incident]'s shape.
	KindIncident = "incident"
)

// Options tunes [Analyze]. The zero value is ready to use.
type Options struct {
	// MinScore drops suspects scoring below it (0 keeps the default
	// threshold, [DefaultMinScore]; a negative value keeps every group
	// with any evidence at all, that is a score above 0).
	MinScore float64
	// Rules classify parked goroutines into patterns. Nil means the
	// built-in rules plus the file named by LEAKSCOPE_RULES.
	Rules []Rule
	// Now is when the report is written; it is copied to
	// [Report.GeneratedAt] (zero leaves it out, keeping output
	// reproducible).
	Now time.Time
	// MaxGoids bounds the sample of member goids kept per suspect
	// (0 means 20).
	MaxGoids int
	// UserCode lists prefixes of code the user owns besides package main
	// and the main module of the build info: import paths
	// ("github.com/acme/platform") or, starting with "/", source
	// directories. Empty means $LEAKSCOPE_USER_CODE (comma-separated).
	UserCode []string
	// Source holds source_code rows read at report time (srclines
	// ForBundle, `report --source-root`): each stands in for a function
	// the bundle holds no readable source of. The analysis itself reads
	// no file.
	Source []schema.SourceCode
	// SourceCalls holds a call index of the program's source read at
	// report time (srclines.CallsForBundle), used when the bundle holds
	// none.
	SourceCalls []schema.SourceCall
	// Timeout bounds how long the analysis may run (0: [DefaultTimeout];
	// negative: no bound); MaxHeap how far the Go heap may grow while it
	// runs (0: [DefaultMaxHeap]; negative: no bound). Past either the
	// analysis stops with a [*CutError].
	Timeout time.Duration
	MaxHeap int64
}

// DefaultMinScore is the score below which a group is not reported.
const DefaultMinScore = 25

// Report is the result of [Analyze]. Its JSON form is the stable contract
// of `leakscope report --format json` described in docs/DESIGN.md.
type Report struct {
	Bundle   BundleSummary `json:"bundle"`
	Suspects []Suspect     `json:"suspects"` // highest score first
	// Incidents group suspects that share their origin in the user's
	// code and grow together; each suspect names its incident.
	Incidents []Incident      `json:"incidents"` // highest score first
	Timeline  []TimelineEvent `json:"timeline"`  // by time
	Series    Series          `json:"series"`
	Heap      HeapGrowth      `json:"heap"`
	Spans     SpanSummary     `json:"spans"`
	// LeakProfile compares the suspects with the runtime's goroutineleak
	// profile when the bundle holds one.
	LeakProfile *LeakProfileCheck `json:"goroutineleak,omitempty"`
	// Races are the race detector's reports found in dumps and logs.
	Races    []Race   `json:"races,omitempty"`
	Warnings []string `json:"warnings"`
	// LookAlikes are parked goroutine groups that look stuck but are not
	// reported, with why: idle pools their owner can still feed, workers
	// a goroutine that can run holds the object of. Most members first.
	LookAlikes []LookAlike `json:"look_alikes,omitempty"`
	// Inputs says what the bundle's goroutine inputs allowed the verdicts
	// to use and what one more input would add.
	Inputs *InputSummary `json:"inputs,omitempty"`
	// Source says how much of the code the goroutines wait in the bundle
	// holds the source of, and what the missing part cost.
	Source *SourceCoverage `json:"source_coverage,omitempty"`
	// GeneratedAt is [Options.Now].
	GeneratedAt time.Time `json:"generated_at,omitzero"`
}

// BundleSummary is the part of the manifest a report repeats, plus what
// the analysis saw.
type BundleSummary struct {
	CaptureID string    `json:"capture_id"`
	Node      string    `json:"node,omitempty"`
	PID       int       `json:"pid,omitempty"`
	URL       string    `json:"url,omitempty"`
	Exe       string    `json:"exe,omitempty"`
	GoVersion string    `json:"go_version,omitempty"`
	Module    string    `json:"module,omitempty"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Sources   []string  `json:"sources"` // "dump (complete)", "trace (truncated: …)"
	// GoroutineSnapshots and HeapSnapshots count the distinct snapshot
	// times seen in the goroutines table and heap profile samples.
	GoroutineSnapshots int   `json:"goroutine_snapshots"`
	HeapSnapshots      int   `json:"heap_snapshots"`
	GoroutineRows      int64 `json:"goroutine_rows"`
	// PeakGoroutines is the largest goroutine count of any snapshot.
	PeakGoroutines int64 `json:"peak_goroutines"`
	// Service and Build name the program and its build
	// ([bundle.Target.Service], [bundle.Target.Build]); "" when unknown.
	Service string `json:"service,omitempty"`
	Build   string `json:"build,omitempty"`
	// Trigger is what started the capture (the manifest's), and
	// TriggerText its sentence ([TriggerText]); absent for a capture
	// started by hand or files ingested.
	Trigger     *bundle.Trigger `json:"trigger,omitempty"`
	TriggerText string          `json:"trigger_text,omitempty"`
}

// TimelineEvent is one dated entry of the leak-cause timeline.
type TimelineEvent struct {
	TS      time.Time `json:"ts"`
	Event   string    `json:"event"`
	Suspect string    `json:"suspect,omitempty"`
	Kind    string    `json:"kind,omitempty"` // "capture", "suspect", "span", "gc", "heap"
}

// Series holds the time series a report charts.
type Series struct {
	Goroutines []Point `json:"goroutines"` // total per snapshot or metric
	HeapLive   []Point `json:"heap_live"`  // heap_live_bytes metric, else heap profile total
	HeapInuse  []Point `json:"heap_inuse"` // heap profile inuse_space total per snapshot
	GC         []Point `json:"gc"`         // GC cycles seen so far, by GCFrom
	// Suspects maps suspect id to its count series.
	Suspects map[string][]Point `json:"suspects"`
	// HeapLiveFrom says where HeapLive comes from: "trace" (the trace
	// windows' live heap metric: no points between windows) or
	// "heap_profiles" (the heap profiles' in-use totals, as HeapInuse).
	HeapLiveFrom string `json:"heap_live_from,omitempty"`
	// GCFrom says where GC comes from: "ebpf" (the probes' gc_start
	// events, every cycle of the capture) or "trace" (the trace
	// windows' GC metric: only the cycles inside windows, numbered
	// across them).
	GCFrom string `json:"gc_from,omitempty"`
	// Windows are the trace windows the heap_live and gc metrics were
	// sampled in, by start: those series have no points between two
	// windows, so a chart draws a gap there, not a line.
	Windows []Window `json:"windows"`
}

// Window is a span of time one source sampled: a trace window.
type Window struct {
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	Source string    `json:"source"` // the raw artifact, as the metrics table names it
}

// HeapGrowth is the heap part of a report.
type HeapGrowth struct {
	Snapshots []time.Time  `json:"snapshots"`
	Growers   []HeapGrower `json:"growers"` // top growing allocation sites
	// GrowthBytes is total inuse growth from the first to the last
	// snapshot; AttributedBytes the part on sites attributed to
	// goroutine suspects.
	GrowthBytes     int64 `json:"growth_bytes"`
	AttributedBytes int64 `json:"attributed_bytes"`
	// Diff is first versus last snapshot (see [HeapDiff] for any two),
	// without the capture's own allocations in the target (profile and
	// trace writers, [flame.Own]); OwnDeltaBytes is how much those
	// changed by.
	Diff          []HeapDiffEntry `json:"diff,omitempty"`
	OwnDeltaBytes int64           `json:"own_delta_bytes,omitempty"`
	// Sight is the slowest growth these heap profiles can name, and
	// what would show a slower one (nil with fewer than three).
	Sight *HeapSight `json:"sight,omitempty"`
}

// HeapSight is what a capture's sampled heap profiles can see: a site
// must rise by about MinRise bytes (its sampling floor at
// MemProfileRate over the profiles' span of Seconds) before it is
// named, so one growing slower than MinPerMin bytes a minute is not.
// The rise needed grows with MemProfileRate, so a capture MinRise/G
// minutes long, or a MemProfileRate that much finer, shows a site
// growing G a minute. Text says so in words.
type HeapSight struct {
	MemProfileRate int64   `json:"mem_profile_rate"`
	Seconds        float64 `json:"seconds"`
	MinRise        float64 `json:"min_rise_bytes"`
	MinPerMin      float64 `json:"min_bytes_per_min"`
	Text           string  `json:"text"`
}

// HeapGrower is one allocation site whose in-use heap grows.
type HeapGrower struct {
	StackID      int64   `json:"stack_id"`
	Location     string  `json:"location"`
	File         string  `json:"file"`
	Line         int     `json:"line"`
	Stack        []Frame `json:"stack"`
	InuseBytes   int64   `json:"inuse_bytes"`
	InuseObjects int64   `json:"inuse_objects"`
	// BytesPerMin is the fitted growth; absent when the site rose in a
	// single step (Range.Trend "step"): a level, not a rate.
	BytesPerMin   float64 `json:"bytes_per_min,omitempty"`
	ObjectsPerMin float64 `json:"objects_per_min"`
	Fit           Fit     `json:"fit"`
	Series        []Point `json:"series"`
	Suspect       string  `json:"suspect,omitempty"` // goroutine suspect it is attributed to
	Pattern       string  `json:"pattern,omitempty"`
	// CountAt, Range, Object, StackIDs and Paths are as in [Suspect]: a grower
	// is one allocating line (all call paths to it) for one suspect or
	// none, and a heap suspect shows exactly its grower's figures.
	CountAt  time.Time `json:"count_at,omitzero"`
	Range    *Range    `json:"range,omitempty"`
	Object   string    `json:"object,omitempty"`
	StackIDs []int64   `json:"stack_ids,omitempty"`
	Paths    []string  `json:"paths,omitempty"`
	// HeapSuspect is the heap suspect this grower is reported as.
	HeapSuspect string `json:"heap_suspect,omitempty"`
}

// HeapDiffEntry is one allocation site's change between two snapshots.
type HeapDiffEntry struct {
	StackID      int64   `json:"stack_id"`
	Location     string  `json:"location"`
	Stack        []Frame `json:"stack,omitempty"`
	BaseBytes    int64   `json:"base_bytes"`
	Bytes        int64   `json:"bytes"`
	DeltaBytes   int64   `json:"delta_bytes"`
	DeltaObjects int64   `json:"delta_objects"`
}

// SpanSummary is the span-lifetime part of a report.
type SpanSummary struct {
	Tasks      int       `json:"tasks"`
	Regions    int       `json:"regions"`
	NeverEnded []SpanRef `json:"never_ended"`
	// Outliving lists goroutines still alive after the span that was open
	// on their creator when they were created had ended.
	Outliving []Outliving `json:"outliving"`
}

// SpanRef identifies one span.
type SpanRef struct {
	ID    int64     `json:"id"`
	Kind  string    `json:"kind"`
	Name  string    `json:"name"`
	Goid  int64     `json:"goid,omitempty"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end,omitzero"`
}

// Outliving is a set of goroutines that outlived the span creating them,
// grouped by span name and goroutine start function.
type Outliving struct {
	Span     string  `json:"span"`
	Function string  `json:"function"`
	Count    int     `json:"count"`
	Goids    []int64 `json:"goids"`
	Suspect  string  `json:"suspect,omitempty"`
}

// LeakProfileCheck compares the analysis with the runtime's goroutineleak
// profile.
type LeakProfileCheck struct {
	Snapshots int `json:"snapshots"`
	// Leaked is the goroutine count the last profile reported, and
	// LeakedAt when that profile was taken.
	Leaked   int64     `json:"leaked"`
	LeakedAt time.Time `json:"leaked_at"`
	// Agree lists suspects the profile confirms; OnlyAnalysis suspects it
	// does not list; OnlyProfile locations it lists that no suspect covers.
	Agree        []string `json:"agree"`
	OnlyAnalysis []string `json:"only_analysis"`
	OnlyProfile  []string `json:"only_profile"`
}

// SourceCoverage says how much of the code the goroutine groups wait in
// (the program's and its dependencies', not the standard library's) the
// bundle holds the source of, and what the missing part cost the
// verdicts.
type SourceCoverage struct {
	// Functions counts the functions the groups wait in; Kept those
	// whose kept source holds the statement waited at.
	Functions int `json:"functions"`
	Kept      int `json:"kept"`
	// Missing lists the others (first maxMissingListed, by function),
	// MissingCount counts them all.
	Missing      []MissingSource `json:"missing,omitempty"`
	MissingCount int             `json:"missing_count"`
	// UndecidedGroups are parked groups (UndecidedGoroutines goroutines)
	// in a select or receive taken as able to run: without their
	// statement a timer case cannot be ruled out, so no stuck verdict is
	// given for them and none of their evidence holds others stuck.
	UndecidedGroups     int `json:"undecided_groups"`
	UndecidedGoroutines int `json:"undecided_goroutines"`
	// SuspectsWithoutSource counts reported suspects whose location's
	// statement the bundle lacks: their pattern comes from frames alone
	// (a ticker or stopped timer is not named).
	SuspectsWithoutSource int `json:"suspects_without_source"`
}

// MissingSource is one function whose source the analysis could not read
// at the line waited at, and why.
type MissingSource struct {
	Function string `json:"function"`
	File     string `json:"file"`
	Why      string `json:"why"` // source absent, unavailable, changed since the build, does not parse
}

// Rule classifies a group of parked goroutines (Kind "goroutine", the
// default) or a growing heap allocation site (Kind "heap") into a leak
// pattern, or names the library shape of an incident (Kind "incident").
// A rule matches when every non-empty condition holds: States (any regexp
// matches the wait reason), Frames (each regexp matches some frame
// function of the stack) and NotFrames (no regexp matches any frame),
// Statement (any of the named facts holds of the statement, read as Go
// from the source kept in the bundle, that the goroutines wait at or the
// heap site allocates at: "select", "receive", "range", "send",
// "in-loop", "semaphore-acquire", "timer-case", "ticker-case", "stopped-timer-case",
// "done-case", "signal-case", "calls:time.AfterFunc", …; see
// [waitStmt.facts]), Source (any regexp matches that statement as
// go/printer prints it, comments left out; never the file's text),
// WaitFor (any of the wait-for findings
// holds: "cycle", "lock-cycle", "rlock-writer", "no-holder",
// "unreachable", "all-asleep"; see docs/DESIGN.md). An incident rule
// matches on Creation (each regexp matches some frame of a member's
// creation chain) and Members (each regexp matches some frame of some
// member's stack) and MemberPatterns (each regexp matches the pattern of
// some member goroutine group: the state its goroutines wait in tells an
// HTTP connection held by an unread body from an idle one); its Fix may say {origin}, replaced by the user's
// function that causes the incident. Rules are tried in order; the first
// match wins.
type Rule struct {
	Pattern   string   `json:"pattern"`
	Kind      string   `json:"kind,omitempty"`
	States    []string `json:"states,omitempty"`
	Frames    []string `json:"frames,omitempty"`
	NotFrames []string `json:"not_frames,omitempty"`
	Statement []string `json:"statement,omitempty"`
	Source    []string `json:"source,omitempty"`
	Creation  []string `json:"creation,omitempty"`
	Members   []string `json:"members,omitempty"`
	// MemberPatterns are regexps of member groups' patterns (incident
	// rules).
	MemberPatterns []string `json:"member_patterns,omitempty"`
	// Allocator (heap rules): any regexp matches the function that made
	// the allocation, the stack's first frame outside the runtime; a
	// timer's allocation is made by time.NewTimer, not by the function
	// that calls it beside other allocations.
	Allocator   []string `json:"allocator,omitempty"`
	WaitFor     []string `json:"wait_for,omitempty"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Fix         string   `json:"fix"`
	// Benign marks patterns that are not leaks by themselves (running
	// goroutines, runtime workers): they are reported only on strong
	// growth.
	Benign bool `json:"benign,omitempty"`

	states, frames, notFrames, source []*regexp.Regexp
	creation, members, memberPatterns []*regexp.Regexp
	allocator                         []*regexp.Regexp
	compiled                          bool
}

// Race is one report of the race detector ("WARNING: DATA RACE") found in
// the bundle's dumps and logs: two accesses to the same memory, at least
// one a write, with no synchronisation between them. Races are not leaks
// but often explain a hang or a crash, so a report shows them beside its
// suspects.
type Race struct {
	// Source is the raw artifact the report came from; Number counts the
	// reports of that source from 1.
	Source   string `json:"source"`
	Number   int    `json:"number"`
	Location string `json:"location,omitempty"`
	// Accesses are the conflicting accesses, the later first.
	Accesses []RaceAccess `json:"accesses"`
}

// RaceAccess is one access of a race report.
type RaceAccess struct {
	// Access is "write", "read", "atomic write"..., with "previous "
	// before the earlier access.
	Access string `json:"access"`
	// Addr is the address accessed, in hex.
	Addr string `json:"addr"`
	Goid int64  `json:"goid"`
	// Function, File and Line name the first frame of the access's stack
	// outside the runtime; Stack is the whole stack, leaf first.
	Function string  `json:"function"`
	File     string  `json:"file,omitempty"`
	Line     int     `json:"line,omitempty"`
	Stack    []Frame `json:"stack"`
	// State is the goroutine's state when the race was found ("running"
	// or "finished"); CreatedBy is the frame that created it.
	State     string `json:"goroutine_state,omitempty"`
	CreatedBy *Frame `json:"created_by,omitempty"`
}

// Onset bases ([Onset.Basis]), most precise first.
const (
	OnsetTraceCreation = "trace-creation"
	OnsetHistory       = "history"
	OnsetAppeared      = "appeared"
	OnsetLongestWait   = "longest-wait"
	OnsetFit           = "fit"
	OnsetProcessStart  = "process-start"
	OnsetFirstSeen     = "first-seen"
)
