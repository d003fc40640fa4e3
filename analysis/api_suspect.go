package analysis

import (
	"time"
)

// Suspect is one probable leak: a group of goroutines parked at the same
// place (Kind "goroutine"), or a heap allocation site that keeps growing
// (Kind "heap").
type Suspect struct {
	ID      string `json:"id"`   // stable within a report: "G1", "H1", …
	Kind    string `json:"kind"` // KindGoroutine or KindHeap
	Pattern string `json:"pattern"`
	// Title is a one-line human description of the pattern.
	Title string `json:"title"`
	// State is the goroutines' wait reason ("chan send", "select", …).
	State    string `json:"state,omitempty"`
	Location string `json:"location"` // blocked (or allocating) function
	File     string `json:"file"`
	Line     int    `json:"line"`
	// Creator is the function holding the go statement; Ancestry its
	// chain of creators, nearest first, up to the root.
	Creator     string   `json:"creator"`
	CreatorFile string   `json:"creator_file,omitempty"`
	CreatorLine int      `json:"creator_line,omitempty"`
	Ancestry    []string `json:"ancestry"`
	// Count is goroutines in the last snapshot (bytes in use for heap).
	Count        int64     `json:"count"`
	GrowthPerMin float64   `json:"growth_per_min"` // goroutines (or bytes) per minute
	Fit          Fit       `json:"fit"`
	FirstSeen    time.Time `json:"first_seen"`
	// MaxWaitMinutes is the longest wait a member reported.
	MaxWaitMinutes int64 `json:"max_wait_minutes,omitempty"`
	// RetainedBytes is heap in use on allocation sites attributed to this
	// group (goroutine suspects), measured from heap profiles.
	RetainedBytes int64 `json:"retained_bytes,omitempty"`
	// RetainedPerMin is the growth of RetainedBytes, bytes per minute.
	RetainedPerMin float64    `json:"retained_bytes_per_min,omitempty"`
	Score          float64    `json:"score"` // 0..100
	Evidence       []Evidence `json:"evidence"`
	Description    string     `json:"description"`
	Fix            string     `json:"fix"`
	// StackID is the bundle stack id of a representative member (for
	// flame graph focus); Stack its frames, leaf first.
	StackID int64   `json:"stack_id"`
	Stack   []Frame `json:"stack"`
	// Goids is a sample of member goroutine ids.
	Goids []int64 `json:"goids,omitempty"`
	// Counts is the member count per snapshot (bytes for heap).
	Counts []Point `json:"counts"`
	// Span names the trace task or region that was open on the creating
	// goroutine when members were created, when a trace shows it.
	Span string `json:"span,omitempty"`
	// LeakProfile is "confirmed" when the runtime's goroutineleak profile
	// lists these goroutines, "not-reported" when the bundle has such a
	// profile that does not, "" when there is no such profile.
	LeakProfile string `json:"goroutineleak,omitempty"`
	// Origin is the frame of the user's own code that caused these
	// goroutines (or, for heap, these allocations), found by following
	// creators goroutine by goroutine; nil when nothing reaches the
	// user's code.
	Origin *Origin `json:"origin,omitempty"`
	// CreationChain is that chain for one member, nearest first: at each
	// hop the goroutine that ran the go statement and the stack inside it.
	CreationChain []CreationHop `json:"creation_chain,omitempty"`
	// Incident is the id of the [Incident] this suspect belongs to.
	Incident string `json:"incident,omitempty"`

	// heap is the in-use rise of the suspect's allocation sites over
	// the heap snapshots, for an incident's heap per call.
	heap heapRise

	// CountAt is the snapshot Count was taken at (the last of Counts):
	// every view shows Count with this time.
	CountAt time.Time `json:"count_at,omitzero"`
	// Range is the span of snapshots GrowthPerMin and Fit were computed
	// over, and what the count (bytes) did across it.
	Range *Range `json:"range,omitempty"`
	// Onset is when the leak probably began: an estimate with its bounds
	// and what it rests on. FirstSeen is only when the capture first saw
	// it.
	Onset *Onset `json:"onset,omitempty"`
	// Source quotes Location's line from the source kept in the bundle, or
	// says why it cannot (source unavailable, or changed since the build).
	Source *SourceQuote `json:"source,omitempty"`
	// Object names, for a heap suspect, what keeps growing where the stack
	// shows it ("map", "slice grown by append", "new objects", …).
	Object string `json:"object,omitempty"`
	// StackIDs are the allocation stacks a heap suspect sums (one
	// allocating line reached by several call paths).
	StackIDs []int64 `json:"stack_ids,omitempty"`
	// Paths name, for a heap suspect of several stacks, where each
	// stack's call path parts from the others (the frame above those all
	// share), largest first: what the suspect covers, as its flame graph
	// shows it.
	Paths []string `json:"paths,omitempty"`

	// Display holds the suspect's figures formatted once, as every view
	// (Markdown, HTML, the workbench) prints them.
	Display *SuspectText `json:"display,omitempty"`

	// Verdict is "leaking" when the group accumulates (its count rose
	// with members surviving, or a trace saw members created and none
	// end), whether or not its members are stuck; "stuck" when its
	// members are parked for good and it does not grow; "" for heap
	// suspects (docs/DESIGN.md, "One verdict"). Stuck says the members
	// are parked for good, so a growing group whose members never leave
	// is "leaking" and Stuck. Confidence is the combined confidence
	// behind Score (0..1).
	Verdict    string  `json:"verdict,omitempty"`
	Stuck      bool    `json:"stuck,omitempty"`
	Confidence float64 `json:"confidence,omitempty"`
	// WaitsOn names the objects the members wait on, as the frames'
	// certain argument words show them, each with the frame and parameter
	// it was read from ("0xc000012340 (c of runtime.chanrecv)"), when
	// known. Words the runtime marked "?" are never used.
	WaitsOn []string `json:"waits_on,omitempty"`
	// Cycle lists the other goroutine groups (by location) in a wait-for
	// cycle with this one: each waits for what only the others hold.
	Cycle []string `json:"cycle,omitempty"`
	// Consequences are goroutine groups that wait for this one and are
	// not reported on their own (the test runner waiting for a stuck
	// test, a WaitGroup.Wait over stuck workers, a caller waiting for a
	// stuck result).
	Consequences []Consequence `json:"consequences,omitempty"`

	keys []groupKey // the dump groups a goroutine suspect counts
	only *memberSet // of their goroutines, those it counts (nil: all)
}

// Incident is one root cause: the suspects (goroutine groups, and the heap
// they pin) that one place in the user's code creates together, as "each
// call to main.(*controller).reconcile leaks 8 goroutines and ~14 KiB of
// heap; 596 calls/min".
type Incident struct {
	ID string `json:"id"` // "I1", …
	// Summary is the incident in one line; Title the library shape or
	// pattern it matches.
	Summary string  `json:"summary"`
	Pattern string  `json:"pattern"`
	Title   string  `json:"title"`
	Origin  *Origin `json:"origin,omitempty"`
	// CreationChain is the top member's chain from its goroutines to the
	// user's frame.
	CreationChain []CreationHop `json:"creation_chain,omitempty"`
	Description   string        `json:"description"`
	Fix           string        `json:"fix"`
	// ParkedIn is the user's function the top member's goroutines are
	// parked in (the innermost frame of the user's that is not a closure
	// run by a library: a lock's waiters in the function that takes it)
	// when the goroutines wait for a mutex (the function that takes
	// it), or the origin names no more than the program's main loop
	// (main.main or a closure in it) or is unknown.
	ParkedIn string `json:"parked_in,omitempty"`
	// Suspects are the member suspect ids, best first: the goroutine
	// groups, then the heap suspects attached to it.
	Suspects []string `json:"suspects"`
	// Goroutines is the members' goroutines in the last snapshot and
	// GoroutinesPerMin their summed growth.
	Goroutines       int64   `json:"goroutines"`
	GoroutinesPerMin float64 `json:"goroutines_per_min"`
	// CallsPerMin estimates how often the origin runs: the slowest
	// growing member group's rate (each call adds at least one of it);
	// 0 when nothing grows. PerCall is goroutines added per call.
	CallsPerMin float64 `json:"calls_per_min,omitempty"`
	PerCall     float64 `json:"goroutines_per_call,omitempty"`
	// RetainedBytes is heap in use attributed to the members and attached
	// heap suspects; BytesPerMin its growth and BytesPerCall per call.
	RetainedBytes int64   `json:"retained_bytes,omitempty"`
	BytesPerMin   float64 `json:"bytes_per_min,omitempty"`
	BytesPerCall  float64 `json:"bytes_per_call,omitempty"`
	// BytesPerCallBound is BytesPerCall's bound from heap sampling (two
	// standard errors); HeapPerCall says both as text, or why heap per
	// call is not given (too few samples, no heap profiles).
	BytesPerCallBound float64   `json:"bytes_per_call_bound,omitempty"`
	HeapPerCall       string    `json:"heap_per_call,omitempty"`
	FirstSeen         time.Time `json:"first_seen"`
	Score             float64   `json:"score"`
	// Evidence says why the members form one incident.
	Evidence []Evidence `json:"evidence"`
	// Consequences are the goroutine groups waiting for the members
	// (folded under them, not suspects of their own).
	Consequences []Consequence `json:"consequences,omitempty"`
	// Display holds the incident's figures as every view prints them.
	Display *IncidentText `json:"display,omitempty"`
}

// IncidentText is an [Incident]'s figures as text, formatted once:
// "308 goroutines", "+814/min", "814 calls/min, 1 goroutine per call",
// "4.5 MiB", "2026-12-01 12:53:55.287 UTC", "95.2".
type IncidentText struct {
	Score      string `json:"score"`
	Goroutines string `json:"goroutines,omitempty"`
	// Rate is the members' summed growth: goroutines per minute, or for
	// an incident of heap alone bytes per minute ("" for a level that
	// rose once, which is no rate).
	Rate string `json:"rate,omitempty"`
	// PerCall is how often the origin runs and what each run leaks
	// (goroutines; heap per call is HeapPerCall), when growth shows it.
	PerCall   string `json:"per_call,omitempty"`
	Retained  string `json:"retained,omitempty"`
	FirstSeen string `json:"first_seen,omitempty"`
}

// Origin is a frame of the user's code that causes a leak.
type Origin struct {
	Function string `json:"function"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	// Basis says what shows it: "trace" or "ebpf" (a full creation
	// stack), "dump" (a dump's "created by" line), "creator" (only the
	// entry function of the creator goroutine, when no stack inside it
	// is known), "allocation" (a heap allocation stack), "stacks"
	// (another stack of the bundle through the creator function),
	// "source" (the only function of the program's indexed source that
	// calls into library code reaching the creator function).
	Basis string `json:"basis"`
	// Goid is the goroutine the user's frame ran in (0 unknown).
	Goid int64 `json:"goid,omitempty"`
	// Members of Sampled followed members lead here.
	Members int64 `json:"members,omitempty"`
	Sampled int64 `json:"sampled,omitempty"`
}

// CreationHop is one step of a creation chain: goroutine Goid, running
// Function (its entry function), executed a go statement with Stack
// (leaf first, from the function holding the go statement).
type CreationHop struct {
	Goid     int64   `json:"goid,omitempty"`
	Function string  `json:"function,omitempty"`
	Stack    []Frame `json:"stack,omitempty"`
	Basis    string  `json:"basis"`
}

// SuspectText is a suspect's figures as text: "362 goroutines",
// "2026-11-30 11:57:42.030 UTC", "+909/min", …
type SuspectText struct {
	Score     string `json:"score"`
	Count     string `json:"count"`
	CountAt   string `json:"count_at"`
	Rate      string `json:"rate"`
	Range     string `json:"range,omitempty"`
	FirstSeen string `json:"first_seen,omitempty"`
	Onset     string `json:"onset,omitempty"`
	Retained  string `json:"retained,omitempty"`
	// Verdict words the verdict, whether the members are stuck for good
	// and the confidence ("leaking, its members stuck for good
	// (confidence 0.97)"); "" for a suspect with no stuck verdict.
	Verdict string `json:"verdict,omitempty"`
}

// Range is a span of snapshots and what a series did across it.
type Range struct {
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	Points int       `json:"points"`
	// Rise is the value at To minus the value at From.
	Rise float64 `json:"rise"`
	// Steps counts the snapshots at which the value went up. Trend is
	// "steady" (several steps up), "step" (it rose once: a level, not a
	// rate; GrowthPerMin is then 0), "flat" or "falling".
	Steps int    `json:"steps"`
	Trend string `json:"trend"`
	// Floor is the smallest rise taken as growth for this series and
	// FloorBasis why (for heap sites: the profile's sampling error for
	// the site's object size, and the noise the series shows).
	Floor      float64 `json:"floor,omitempty"`
	FloorBasis string  `json:"floor_basis,omitempty"`
}

// Trends of a [Range].
const (
	TrendSteady  = "steady"
	TrendStep    = "step"
	TrendFlat    = "flat"
	TrendFalling = "falling"
)

// Onset is an estimate of when a leak began.
type Onset struct {
	At       time.Time `json:"at"`
	Earliest time.Time `json:"earliest,omitzero"`
	Latest   time.Time `json:"latest"`
	// Basis names what At rests on: "appeared" (absent in one snapshot,
	// present in the next), "longest-wait" (the oldest member's wait in a
	// dump), "trace-creation" (a member's creation in a trace window),
	// "fit" (the growth line extrapolated back to zero), "process-start"
	// (the process started then), "history" (absent from a goroutine
	// profile of the agent's history before the capture, present in the
	// next), or "first-seen" (nothing earlier than the capture's first
	// sight).
	Basis string `json:"basis"`
	// Detail says in words what each bound comes from.
	Detail string `json:"detail"`
}

// SourceQuote is the source line a suspect points at, as kept in the
// bundle when it was captured or ingested.
type SourceQuote struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Function string `json:"function"`
	// Status is "ok", "changed" (the file read at capture no longer fits
	// the build: the line lies outside the function or is not code) or
	// "unavailable"; Detail says why when not ok.
	Status string       `json:"status"`
	Detail string       `json:"detail,omitempty"`
	Lines  []SourceLine `json:"lines,omitempty"` // the line and up to 3 around it, inside the function
	SHA256 string       `json:"sha256,omitempty"`
}

// SourceLine is one numbered source line.
type SourceLine struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

// InputSummary is what the inputs allowed: how many dump snapshots over
// how long, whether a traceback showed the runtime's frames, whether
// there is a goroutineleak profile or a trace; Allowed lists the kinds of
// verdict that used them, Next what one more input would add.
type InputSummary struct {
	Snapshots   int      `json:"snapshots"`
	SpanSeconds float64  `json:"span_seconds,omitempty"`
	Traceback   bool     `json:"traceback"`
	LeakProfile bool     `json:"goroutineleak"`
	Trace       bool     `json:"trace"`
	Allowed     []string `json:"allowed"`
	Next        []string `json:"next"`
}

// LookAlike is a parked goroutine group the stuck verdict let go.
type LookAlike struct {
	Location string `json:"location"`
	State    string `json:"state"`
	Count    int64  `json:"count"`
	Kind     string `json:"kind"` // "idle-pool", "wakeable", "possible-holder", "contended", "progress" or "source-absent"
	Reason   string `json:"reason"`
}

// Consequence is a goroutine group stuck only because it waits for a
// suspect's goroutines.
type Consequence struct {
	Location string  `json:"location"`
	File     string  `json:"file,omitempty"`
	Line     int     `json:"line,omitempty"`
	State    string  `json:"state"`
	Count    int64   `json:"count"`
	Relation string  `json:"relation"` // how it waits for the suspect
	Goids    []int64 `json:"goids,omitempty"`
}

// Fit summarises a least-squares line through a series.
type Fit struct {
	Slope    float64 `json:"slope_per_min"`
	R2       float64 `json:"r2"`
	Monotone float64 `json:"monotonicity"` // share of steps that do not go down
	Points   int     `json:"points"`
}

// Evidence is one observation supporting a suspect.
type Evidence struct {
	Kind   string  `json:"kind"` // "growth", "long-wait", "goroutineleak", "heap", "trace", "survival", "persistent", "wait-cycle", "unreachable", …
	Detail string  `json:"detail"`
	Value  float64 `json:"value,omitempty"`
	// Weight is what the evidence adds to the log-odds of the verdict
	// (negative: it speaks against); see docs/DESIGN.md, "Scoring".
	Weight float64 `json:"weight,omitempty"`
}

// Frame is one stack frame.
type Frame struct {
	Function string `json:"function"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	// owner and module say whose code it is (see codeIndex), set when
	// the bundle's stacks are loaded.
	owner  Owner
	module string
}

// Point is one sample of a time series.
type Point struct {
	TS    time.Time `json:"ts"`
	Value float64   `json:"value"`
}

// Owner says whose code a frame runs: the user's (package main, the main
// module, and anything under [Options.UserCode]), the standard library's,
// or a dependency's. The zero value means "not classified yet".
type Owner uint8

// groupKey identifies goroutines parked identically: same wait reason,
// same stack, same creator function.
type groupKey struct {
	state   string
	stackID int64
	creator string
}

// heapRise is the in-use rise of allocation sites over the heap
// snapshots, with the bytes one sample stands for and the time covered.
type heapRise struct {
	bytes, weight, minutes float64
	sites                  int
}
