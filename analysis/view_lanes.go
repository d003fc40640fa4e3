package analysis

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// Goroutine states of a [StateSegment], as the trace names them.
const (
	StateRunning  = "running"
	StateRunnable = "runnable"
	StateWaiting  = "waiting"
	StateSyscall  = "syscall"
)

// maxLaneMembers and maxLaneCreators bound the goroutines of a suspect's
// state view: a sample of its members (the sample the report keeps) and
// the distinct goroutines that created them, up the creation chain.
const (
	maxLaneMembers  = 16
	maxLaneCreators = 16
)

// StateLanes is what go tool trace's goroutine view shows for a few
// goroutines: one lane per goroutine of its state over time (running,
// runnable, waiting with the reason, syscall), inside the trace windows,
// with the stack of every change (where it blocked) for hover.
type StateLanes struct {
	// Suspect is the suspect whose goroutines these are ("" for goids
	// asked for directly).
	Suspect string `json:"suspect,omitempty"`
	// From and To bound the segments; Windows are the trace windows
	// (states are known only inside them).
	From    time.Time   `json:"from"`
	To      time.Time   `json:"to"`
	Windows []Window    `json:"windows"`
	Lanes   []StateLane `json:"lanes"`
	// Stacks holds the frames (leaf first) of every stack a segment
	// names, by stack id as a decimal string.
	Stacks map[string][]Frame `json:"stacks"`
	// Missing lists goroutines asked for that no trace window shows.
	Missing []int64 `json:"missing"`
	// Note says what the lanes cannot show, when anything ("the bundle
	// has no execution trace", …).
	Note string `json:"note,omitempty"`
}

// StateLane is one goroutine's states in time order.
type StateLane struct {
	Goid int64 `json:"goid"`
	// Function is the goroutine's entry function; Role why it is drawn:
	// "member" (of the suspect) or "creator" (it created a member, or a
	// member's creator).
	Function string `json:"function,omitempty"`
	Role     string `json:"role"`
	// Label names the lane for people ("goroutine 42 · main.worker ·
	// member").
	Label    string         `json:"label"`
	Segments []StateSegment `json:"segments"`
	// Share is how long the lane spent in each state inside the windows,
	// as a fraction of the time it was seen (running, runnable, waiting,
	// syscall).
	Share map[string]float64 `json:"share"`
}

// StateSegment is one span of a goroutine's state.
type StateSegment struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	State string    `json:"state"`
	// Reason is what a waiting goroutine waits on ("chan receive",
	// "select", "sync.Mutex.Lock", "sleep", …), as the trace says.
	Reason string `json:"reason,omitempty"`
	// StackID is the stack of the change that began the segment (where
	// the goroutine blocked, for waiting), a key of StateLanes.Stacks; 0
	// when the trace has none.
	StackID int64 `json:"stack_id,omitempty"`
	// SinceBefore says the goroutine was already in this state when the
	// window began (the trace's first word of it is its state, not a
	// change): the segment starts at the window's start.
	SinceBefore bool `json:"since_before_window,omitempty"`
	// ReasonFrom, when set, says Reason is not the trace's: "dump" (the
	// goroutine's wait in the goroutine dump its suspect counts, for a
	// wait the trace began in without naming it).
	ReasonFrom string `json:"reason_from,omitempty"`
}

// LaneGoroutines returns the goroutines a suspect's state view shows: the
// oldest of its members (goids given in any order; the oldest are the
// likeliest to be inside a trace window), then the goroutines that created
// them, nearest first, each once, with the role of each.
func LaneGoroutines(members []int64, tree *AncestryTree) (goids []int64, roles map[int64]string) {
	roles = map[int64]string{}
	sorted := slices.Clone(members)
	slices.Sort(sorted)
	for _, g := range sorted {
		if len(goids) == maxLaneMembers {
			break
		}
		if roles[g] == "" {
			roles[g] = "member"
			goids = append(goids, g)
		}
	}
	creators := 0
	for _, g := range slices.Clone(goids) {
		for _, c := range tree.Chain(g) {
			if creators == maxLaneCreators {
				break
			}
			if roles[c] == "" {
				roles[c] = "creator"
				goids = append(goids, c)
				creators++
			}
		}
	}
	return goids, roles
}

// GoroutineStates is the state view of goids (roles say why each is
// drawn) inside the bundle's trace windows: their transitions from src,
// each lane named by its node of tree. Without a trace window it says so
// in Note and has no lanes.
func GoroutineStates(b *bundle.Bundle, mem memory.Allocator, src TransitionSource, goids []int64, roles map[int64]string, tree *AncestryTree) (*StateLanes, error) {
	var windows []Window
	for _, w := range traceWindows(b.Manifest, nil) {
		windows = append(windows, Window{Start: tsTime(w.start), End: tsTime(w.end), Source: bundle.SourceTrace})
	}
	sort.Slice(windows, func(i, j int) bool { return windows[i].Start.Before(windows[j].Start) })
	if len(windows) == 0 {
		return &StateLanes{Windows: []Window{}, Lanes: []StateLane{}, Stacks: map[string][]Frame{}, Missing: goids,
			Note: "the bundle has no execution trace: capture with trace windows (capture's default) to see goroutine states"}, nil
	}
	trs, err := src(b, goids, windows[0].Start.UnixNano(), windows[len(windows)-1].End.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("goroutine states: %w", err)
	}
	entry := map[int64]string{}
	for _, g := range goids {
		if n := tree.nodeOf[g]; n != nil {
			entry[g] = n.Label
		}
	}
	out, err := Lanes(b, mem, trs, goids, roles, windows, entry)
	if err == nil && len(out.Lanes) == 0 {
		out.Note = "no trace window saw these goroutines (they were created after the last window, or ran in none)"
	}
	return out, err
}

// Lanes builds the state view of goids from their transitions (as a
// TransitionSource returns them), cut to the trace windows of the series:
// a state still open when a window ends ends there. roles and entry name
// each lane; the stacks the segments name are read from the bundle.
func Lanes(b *bundle.Bundle, mem memory.Allocator, trs []schema.Transition, goids []int64, roles map[int64]string, windows []Window, entry map[int64]string) (*StateLanes, error) {
	out := &StateLanes{Windows: windows, Lanes: []StateLane{}, Stacks: map[string][]Frame{}, Missing: []int64{}}
	if out.Windows == nil {
		out.Windows = []Window{}
	}
	by := map[int64][]schema.Transition{}
	for _, t := range trs {
		by[t.Goid] = append(by[t.Goid], t)
	}
	stackIDs := map[int64]bool{}
	for _, g := range goids {
		ts := by[g]
		if len(ts) == 0 {
			out.Missing = append(out.Missing, g)
			continue
		}
		sort.SliceStable(ts, func(i, j int) bool { return ts[i].TS < ts[j].TS })
		lane := StateLane{Goid: g, Function: entry[g], Role: roles[g], Segments: segments(ts, windows)}
		lane.Label = laneLabel(lane)
		lane.Share = shares(lane.Segments)
		for _, s := range lane.Segments {
			if s.StackID != 0 {
				stackIDs[s.StackID] = true
			}
			if out.From.IsZero() || s.Start.Before(out.From) {
				out.From = s.Start
			}
			if s.End.After(out.To) {
				out.To = s.End
			}
		}
		out.Lanes = append(out.Lanes, lane)
	}
	if len(stackIDs) > 0 {
		st, err := loadStacks(b, mem, nil)
		if err != nil {
			return nil, err
		}
		for id := range stackIDs {
			out.Stacks[fmt.Sprint(id)] = st.framesOf(id)
		}
	}
	return out, nil
}

// segments turns one goroutine's transitions (by time) into state spans:
// each change opens a span in its new state, the next change (or the end
// of the window the span began in) closes it. Spans of notexist and of an
// undetermined state are not drawn.
func segments(ts []schema.Transition, windows []Window) []StateSegment {
	var out []StateSegment
	for i, t := range ts {
		state := laneState(t.To)
		if state == "" {
			continue
		}
		start := tsTime(t.TS)
		end := windowEnd(windows, start)
		// A first sight in a window (from an undetermined state) shows
		// the state the goroutine was already in: it held it from the
		// window's start, whenever the trace first says so.
		before := t.From == "undetermined"
		if ws := windowStart(windows, start); before && !ws.IsZero() && (len(out) == 0 || out[len(out)-1].End.Before(ws) || out[len(out)-1].End.Equal(ws)) {
			start = ws
		}
		if i+1 < len(ts) {
			next := tsTime(ts[i+1].TS)
			if end.IsZero() || next.Before(end) {
				end = next
			}
		}
		if end.IsZero() || end.Before(start) {
			end = start
		}
		seg := StateSegment{Start: start, End: end, State: state, StackID: t.StackID, SinceBefore: before}
		if state == StateWaiting {
			seg.Reason = t.Reason
		}
		out = append(out, seg)
	}
	if out == nil {
		out = []StateSegment{}
	}
	return out
}

// laneState maps a trace state name to a drawn state ("" for notexist
// and undetermined).
func laneState(s string) string {
	switch s {
	case StateRunning, StateRunnable, StateWaiting, StateSyscall:
		return s
	}
	return ""
}

// windowStart returns the start of the window holding t (zero when none
// does).
func windowStart(windows []Window, t time.Time) time.Time {
	for _, w := range windows {
		if !t.Before(w.Start) && !t.After(w.End) {
			return w.Start
		}
	}
	return time.Time{}
}

// windowEnd returns the end of the window holding t (zero when none does).
func windowEnd(windows []Window, t time.Time) time.Time {
	for _, w := range windows {
		if !t.Before(w.Start) && !t.After(w.End) {
			return w.End
		}
	}
	return time.Time{}
}

// shares sums each state's time over the lane's segments, as fractions.
func shares(segs []StateSegment) map[string]float64 {
	out := map[string]float64{}
	var total time.Duration
	for _, s := range segs {
		d := s.End.Sub(s.Start)
		out[s.State] += float64(d)
		total += d
	}
	for k := range out {
		if total > 0 {
			out[k] /= float64(total)
		} else {
			out[k] = 0
		}
	}
	return out
}

func laneLabel(l StateLane) string {
	s := fmt.Sprintf("goroutine %d", l.Goid)
	if l.Function != "" {
		s += " · " + l.Function
	}
	if l.Role != "" {
		s += " · " + l.Role
	}
	return s
}
