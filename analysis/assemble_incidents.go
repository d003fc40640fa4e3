package analysis

import (
	"container/heap"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/leakscope/leakscope/internal/format"
)

// growTogether bounds how far apart two member groups' growth rates may
// be (as a ratio) and still be one incident: one call may create a group
// once and another several times (a listener per handler), but not a
// hundred times.
const growTogether = 8

// onceSpread bounds the rates, as a ratio to the slowest member group's,
// that count as groups created once per call (fits of groups growing
// alike differ by their noise; a group created twice per call is 2×).
const onceSpread = 1.5

// incidents groups the numbered suspects into incidents: goroutine groups
// with the same origin in the user's code (its function: one call runs
// every line of it) that grow
// together (both grow, at rates within growTogether of each other, or
// neither grows), then the heap suspects their code or goroutines
// allocate. Goroutine groups in one wait-for cycle are one incident, and
// an incident lists its members' consequences (the groups folded under
// them). Every suspect ends up in exactly one incident; it sets each
// suspect's Incident.
func incidents(sus []Suspect, rules []Rule, rf *releaseFinder) []Incident {
	var groups [][]int // suspect indexes
	byOrigin := map[string][]int{}
	for i, s := range sus {
		if s.Kind != KindGoroutine {
			continue
		}
		key := ""
		switch {
		case s.Origin != nil:
			key = s.Origin.Function
		case s.Creator != "" && !isUser(Frame{Function: s.Creator, File: s.CreatorFile}):
			// No origin: groups started by one library function (a
			// connection's readLoop and writeLoop) are one object's.
			key = "created by " + s.Creator
		}
		joined := false
		if key != "" && joinsAny(s) {
			for _, gi := range byOrigin[key] {
				if grewTogether(sus[groups[gi][0]], s) {
					groups[gi] = append(groups[gi], i)
					joined = true
					break
				}
			}
		}
		if !joined {
			groups = append(groups, []int{i})
			if key != "" && joinsAny(s) {
				byOrigin[key] = append(byOrigin[key], len(groups)-1)
			}
		}
	}
	groups = mergeCycles(sus, groups)
	groups = mergeCreators(sus, groups)
	groups = mergeHolders(sus, groups)
	owners := newHeapOwners(sus, groups)
	for i, s := range sus {
		if s.Kind != KindHeap {
			continue
		}
		if gi := owners.owner(s); gi >= 0 {
			groups[gi] = append(groups[gi], i)
		} else {
			groups = append(groups, []int{i})
		}
	}
	out := make([]Incident, 0, len(groups))
	for _, g := range groups {
		out = append(out, makeIncident(sus, g, rules, rf))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	byID := make(map[string][]int, len(sus))
	for k := range sus {
		byID[sus[k].ID] = append(byID[sus[k].ID], k)
	}
	for i := range out {
		out[i].ID = fmt.Sprintf("I%d", i+1)
		for _, id := range out[i].Suspects {
			for _, k := range byID[id] {
				sus[k].Incident = out[i].ID
			}
		}
	}
	return out
}

// mergeCycles joins groups whose goroutines are in one wait-for cycle
// (a suspect's Cycle names the other's location): a deadlock is one
// incident whatever its members' origins. Groups keep their order.
func mergeCycles(sus []Suspect, groups [][]int) [][]int {
	// Two groups are joined when a member of one names a member of the
	// other's location in its cycle: an index by location finds them
	// without comparing every pair.
	byLoc := map[string][]int{}
	for gi, g := range groups {
		for _, a := range g {
			byLoc[sus[a].Location] = append(byLoc[sus[a].Location], gi)
		}
	}
	adj := make([][]int, len(groups))
	for gi, g := range groups {
		for _, a := range g {
			for _, loc := range sus[a].Cycle {
				for _, gj := range byLoc[loc] {
					if gj != gi {
						adj[gi] = append(adj[gi], gj)
						adj[gj] = append(adj[gj], gi)
					}
				}
			}
		}
	}
	// Each group absorbs, lowest index first, the groups joined to what
	// it holds so far, as a scan of the later groups after each join
	// would.
	taken := make([]bool, len(groups))
	var out [][]int
	for gi := range groups {
		if taken[gi] {
			continue
		}
		taken[gi] = true
		merged := groups[gi]
		next := &intHeap{}
		push := func(g int) {
			for _, gj := range adj[g] {
				if !taken[gj] {
					heap.Push(next, gj)
				}
			}
		}
		push(gi)
		for next.Len() > 0 {
			gj := heap.Pop(next).(int)
			if taken[gj] {
				continue
			}
			taken[gj] = true
			merged = append(merged, groups[gj]...)
			push(gj)
		}
		out = append(out, merged)
	}
	return out
}

// mergeCreators joins a group whose origin is only its creator
// goroutine's entry function (eBPF's go-statement PC, a dump's "created
// by" line) into a group, growing with it, whose full creation stack
// shows the user's frame inside that same goroutine (same goid, or the
// same entry function at the hop holding the frame): both were created
// by one call of the user's code, seen at two depths. Groups keep their
// order.
func mergeCreators(sus []Suspect, groups [][]int) [][]int {
	within := func(weak, strong Suspect) bool {
		w, o := weak.Origin, strong.Origin
		if w == nil || o == nil || w.Basis != basisEntry || o.Basis == basisEntry || !grewTogether(weak, strong) {
			return false
		}
		if w.Goid != 0 && w.Goid == o.Goid {
			return true
		}
		for _, h := range strong.CreationChain {
			if _, i := userFrame(h.Stack); i >= 0 && h.Function == w.Function {
				return true
			}
		}
		return false
	}
	// Only a group led by an entry-basis origin can be merged, and only
	// into one led by another basis: index the first by goid and by
	// function, so each other group looks up its candidates.
	byGoid, byFunc := map[int64][]int{}, map[string][]int{}
	for j, g := range groups {
		if w := sus[g[0]].Origin; w != nil && w.Basis == basisEntry {
			if w.Goid != 0 {
				byGoid[w.Goid] = append(byGoid[w.Goid], j)
			}
			byFunc[w.Function] = append(byFunc[w.Function], j)
		}
	}
	if len(byFunc) == 0 {
		return groups
	}
	merged := make([]bool, len(groups))
	for i, g := range groups {
		strong := sus[g[0]]
		if merged[i] || strong.Origin == nil || strong.Origin.Basis == basisEntry {
			continue
		}
		cands := append([]int(nil), byGoid[strong.Origin.Goid]...)
		for _, h := range strong.CreationChain {
			cands = append(cands, byFunc[h.Function]...)
		}
		slices.Sort(cands)
		for _, j := range slices.Compact(cands) {
			if !merged[j] && within(sus[groups[j][0]], strong) {
				groups[i] = append(groups[i], groups[j]...)
				merged[j] = true
			}
		}
	}
	out := groups[:0]
	for i, g := range groups {
		if !merged[i] {
			out = append(out, g)
		}
	}
	return out
}

// joinsAny reports whether grewTogether can hold for s with any group:
// one stuck for good that does not grow joins none, so thousands of
// them from one origin are not each compared with all the others.
func joinsAny(s Suspect) bool { return s.GrowthPerMin > 0 || s.Verdict != "stuck" }

// grewTogether reports whether two goroutine groups of one origin grow
// alike: both grow at rates within growTogether of each other, or
// neither grows and neither is stuck.
func grewTogether(a, b Suspect) bool {
	ga, gb := a.GrowthPerMin > 0, b.GrowthPerMin > 0
	if ga != gb {
		return false
	}
	if !ga {
		// Groups stuck for good, each on its own, are separate bugs
		// even when one function started them; a wait-for cycle joins
		// them (mergeCycles).
		return a.Verdict != "stuck" && b.Verdict != "stuck"
	}
	r := a.GrowthPerMin / b.GrowthPerMin
	return r <= growTogether && r >= 1.0/growTogether
}

// heapOwners indexes the goroutine groups by the functions owner
// looks for on a heap suspect's stack, each to the first group that
// has it, so each heap suspect costs its stack's length, not every
// group's members.
type heapOwners struct {
	// byOrigin: a group led by a goroutine suspect of that origin
	// function; byMember: a member located or entered there;
	// byCreator: a member started by it.
	byOrigin, byMember, byCreator map[string]int
}

// newHeapOwners indexes groups; heap suspects in them are left out.
func newHeapOwners(sus []Suspect, groups [][]int) *heapOwners {
	ho := &heapOwners{byOrigin: map[string]int{}, byMember: map[string]int{}, byCreator: map[string]int{}}
	first := func(m map[string]int, fn string, gi int) {
		if _, ok := m[fn]; !ok {
			m[fn] = gi
		}
	}
	for gi, g := range groups {
		if top := sus[g[0]]; top.Kind == KindGoroutine && top.Origin != nil {
			first(ho.byOrigin, top.Origin.Function, gi)
		}
		for _, i := range g {
			m := &sus[i]
			if m.Kind != KindGoroutine {
				continue
			}
			first(ho.byMember, m.Location, gi)
			first(ho.byMember, entryFunction(m.Stack), gi)
			if m.Creator != "" {
				first(ho.byCreator, m.Creator, gi)
			}
		}
	}
	return ho
}

// owner returns the group whose origin function is on a heap
// suspect's allocation stack above a library frame (the library the
// origin called makes what its goroutines hold: an informer factory and
// its informers; a *sql.DB and what its driver prepares), or whose member goroutines made it (its
// entry or location is on that stack), or whose members were started by
// the code that allocated it (their creator is on that stack below its
// entry: net/http's dialConn allocates a connection's buffers and starts
// the readLoop and writeLoop that hold them); -1 for none. The first
// and the last need a library to have allocated it: heap the user's own
// code allocates beside the goroutines it leaks (a handler appending to
// a package-level slice) is not theirs, since attribution found none of
// them holding it, so it is an incident of its own.
func (ho *heapOwners) owner(h Suspect) int {
	best := -1
	lower := func(m map[string]int, fn string) {
		if gi, ok := m[fn]; ok && (best < 0 || gi < best) {
			best = gi
		}
	}
	for _, f := range h.Stack { // an origin must be on the stack
		if libraryBelow(h.Stack, f.Function) {
			lower(ho.byOrigin, f.Function)
		}
	}
	if best >= 0 {
		return best
	}
	library := allocatedByLibrary(h.Stack)
	entry := entryFunction(h.Stack)
	for _, f := range h.Stack {
		lower(ho.byMember, f.Function)
		if library && f.Function != entry {
			lower(ho.byCreator, f.Function)
		}
	}
	return best
}

// libraryBelow reports whether fn is on an allocation stack with a frame
// of a library (not the runtime's, not the user's) between it and the
// allocation.
func libraryBelow(stack []Frame, fn string) bool {
	for _, f := range stack {
		if f.Function == fn {
			return false
		}
		if !isRuntime(f.Function) && !isUser(f) {
			return slices.ContainsFunc(stack, func(g Frame) bool { return g.Function == fn })
		}
	}
	return false
}

// allocatedByLibrary reports whether the first frame of an allocation
// stack outside the runtime is a library's (or there is none).
func allocatedByLibrary(stack []Frame) bool {
	for _, f := range stack {
		if !isRuntime(f.Function) {
			return !isUser(f)
		}
	}
	return true
}

// makeIncident sums one group of suspects (indexes into sus, best
// first) into an incident.
func makeIncident(sus []Suspect, members []int, rules []Rule, rf *releaseFinder) Incident {
	top := sus[members[0]]
	inc := Incident{Pattern: top.Pattern, Title: top.Title, Description: top.Description, Fix: top.Fix,
		Origin: top.Origin, CreationChain: top.CreationChain, Score: top.Score, FirstSeen: top.FirstSeen,
		Suspects: []string{}, Evidence: []Evidence{}}
	var rates []float64
	var shapes []string
	var rise heapRise
	for _, i := range members {
		s := sus[i]
		inc.Suspects = append(inc.Suspects, s.ID)
		inc.Score = math.Max(inc.Score, s.Score)
		if !s.FirstSeen.IsZero() && (inc.FirstSeen.IsZero() || s.FirstSeen.Before(inc.FirstSeen)) {
			inc.FirstSeen = s.FirstSeen
		}
		inc.Consequences = joinConsequences(inc.Consequences, s.Consequences)
		rise.join(s.heap)
		switch s.Kind {
		case KindGoroutine:
			inc.Goroutines += s.Count
			inc.GoroutinesPerMin += s.GrowthPerMin
			inc.RetainedBytes += s.RetainedBytes
			inc.BytesPerMin += s.RetainedPerMin
			if s.GrowthPerMin > 0 {
				rates = append(rates, s.GrowthPerMin)
			}
			shapes = append(shapes, shortName(s.Location))
		case KindHeap:
			inc.RetainedBytes += s.Count
			inc.BytesPerMin += s.GrowthPerMin
		}
	}
	if len(rates) > 0 {
		inc.CallsPerMin, inc.PerCall = perCall(rates, inc.GoroutinesPerMin)
		inc.BytesPerCall, inc.BytesPerCallBound, inc.HeapPerCall = heapPerCall(rise, inc.CallsPerMin)
	}
	inc.GoroutinesPerMin = round(inc.GoroutinesPerMin, 2)
	inc.BytesPerMin = round(inc.BytesPerMin, 1)
	if r := matchIncident(rules, sus, members); r != nil {
		inc.Pattern, inc.Title, inc.Description = r.Pattern, r.Title, r.Description
		inc.Fix = r.Fix
	} else if libraryOwned(sus, members) {
		libraryIncident(&inc, sus, members, rf)
	}
	if h := holderOf(sus, members); h != nil {
		inc.Pattern, inc.Title, inc.Description, inc.Fix = h.Pattern, h.Title, h.Description, h.Fix
	}
	inc.Fix = inUserTerms(inc.Fix, inc.Origin)
	if top.Kind == KindGoroutine && (saysLittle(inc.Origin) || lockWait(top)) {
		inc.ParkedIn = parkedIn(top.Stack, inc.Origin)
	}
	inc.Suspects = append(inc.Suspects[:0:0], inc.Suspects...)
	inc.Summary = incidentSummary(inc, top)
	inc.Display = incidentText(inc)
	shared := "origin"
	if inc.Origin == nil {
		shared = "creator function (" + shortName(top.Creator) + ")"
	}
	if len(members) > 1 {
		inc.Evidence = append(inc.Evidence, Evidence{Kind: "incident",
			Detail: fmt.Sprintf("%d suspects share their %s and grow together: %s", len(members), shared, strings.Join(shapes, ", "))})
	}
	if inc.HeapPerCall != "" {
		inc.Evidence = append(inc.Evidence, Evidence{Kind: "heap", Detail: inc.HeapPerCall, Value: inc.BytesPerCall})
	}
	if inc.Origin != nil {
		inc.Evidence = append(inc.Evidence, Evidence{Kind: "origin", Detail: originText(inc.Origin, inc.CreationChain)})
	} else {
		for _, e := range top.Evidence {
			if e.Kind == "origin" {
				inc.Evidence = append(inc.Evidence, e) // why the caller is unknown
			}
		}
	}
	return inc
}

// joinConsequences adds a member's consequences to an incident's, each
// group once: the test runner waiting for two goroutines of one deadlock
// is listed under both members but is one group of the incident.
func joinConsequences(have, add []Consequence) []Consequence {
	same := func(a, b Consequence) bool {
		return a.Location == b.Location && a.Line == b.Line && a.State == b.State && slices.Equal(a.Goids, b.Goids)
	}
	for _, c := range add {
		if !slices.ContainsFunc(have, func(h Consequence) bool { return same(h, c) }) {
			have = append(have, c)
		}
	}
	return have
}

// perCall estimates how often the origin runs and how many goroutines
// each run leaks from the member groups' growth rates: every group grows
// by a whole number of goroutines per call, and the slowest groups are
// the ones created once per call, so the call rate is the median of the
// rates within onceSpread of the slowest (robust to one noisy fit when
// all are once per call; errgroup's waiter beside its three blocked
// members gives 1, not 2). A per-call count within a quarter of a whole
// number is that number.
func perCall(rates []float64, total float64) (calls, each float64) {
	r := slices.Clone(rates)
	slices.Sort(r)
	n := 1
	for n < len(r) && r[n] <= r[0]*onceSpread {
		n++
	}
	calls = r[n/2]
	if n%2 == 0 {
		calls = (r[n/2-1] + r[n/2]) / 2
	}
	each = total / calls
	if n := math.Round(each); n >= 1 && math.Abs(each-n) < 0.25 {
		each = n
	}
	return round(calls, 1), round(each, 1)
}

// inUserTerms substitutes the user's frame for {origin} in a fix.
func inUserTerms(fix string, o *Origin) string {
	name := "the code that starts it"
	if o != nil {
		name = "`" + shortName(o.Function) + "`"
	}
	return strings.ReplaceAll(fix, "{origin}", name)
}

// incidentSummary is the incident's one line.
func incidentSummary(inc Incident, top Suspect) string {
	where := "an unknown caller"
	if inc.Origin != nil {
		where = "`" + shortName(inc.Origin.Function) + "`"
	}
	heap := ""
	if inc.BytesPerCall > 0 {
		heap = fmt.Sprintf(" and ~%s ± %s of heap", format.Bytes(inc.BytesPerCall), format.Bytes(inc.BytesPerCallBound))
	} else if inc.RetainedBytes > 0 {
		heap = fmt.Sprintf(", holding %s of heap", format.Bytes(float64(inc.RetainedBytes)))
	}
	what := inc.Title
	if what == "" {
		what = inc.Pattern
	}
	if inc.ParkedIn != "" {
		where = fmt.Sprintf("%s (parked in `%s`)", where, shortName(inc.ParkedIn))
	}
	switch {
	case top.Kind == KindHeap && inc.BytesPerMin == 0:
		return fmt.Sprintf("heap allocated under %s rose to %s (%s)", where, format.Bytes(float64(inc.RetainedBytes)), what)
	case top.Kind == KindHeap:
		return fmt.Sprintf("heap allocated under %s grows %s to %s (%s)", where, FormatRate(inc.BytesPerMin, KindHeap), format.Bytes(float64(inc.RetainedBytes)), what)
	case inc.CallsPerMin > 0 && len(inc.Suspects) == 1:
		return fmt.Sprintf("%s created from %s %s, %s%s (%s)", format.Count(int64(inc.Goroutines), "goroutine"), where, format.Verb(inc.Goroutines, "leaks", "leak"), FormatRate(inc.GoroutinesPerMin, KindGoroutine), heap, what)
	case inc.CallsPerMin > 0:
		return fmt.Sprintf("each call to %s leaks %s%s (%s); %s calls/min", where, format.Count(inc.PerCall, "goroutine"), heap, what, format.Figure(inc.CallsPerMin))
	case top.Verdict == "leaking":
		// Growth with no rate (one step): still a leak, as in every
		// other capture of it (docs/DESIGN.md, "One verdict").
		return fmt.Sprintf("%s created from %s %s%s (%s)", format.Count(int64(inc.Goroutines), "goroutine"), where, format.Verb(inc.Goroutines, "leaks", "leak"), heap, what)
	}
	return fmt.Sprintf("%s created from %s %s stuck%s (%s)", format.Count(int64(inc.Goroutines), "goroutine"), where, format.Verb(inc.Goroutines, "is", "are"), heap, what)
}

// parkedIn is the user's function goroutines are parked in: the
// innermost frame of the user's code on their stack that is not a
// closure (a callback a library runs, as singleflight's Do runs the
// function given to it, is named by the function that passed it); ""
// when it is the origin's function or the stack has no user frame.
func parkedIn(stack []Frame, o *Origin) string {
	for _, f := range stack {
		if !isUser(f) || declaredIn(f.Function) != "" {
			continue
		}
		if o != nil && f.Function == o.Function {
			return ""
		}
		return f.Function
	}
	return ""
}

// saysLittle reports whether an origin names no function of the user's
// beyond the program's main loop (main.main or a closure in it) or none
// at all: the incident then also names the function its goroutines are
// parked in.
func saysLittle(o *Origin) bool {
	return o == nil || processRoot(o.Function) || processRoot(declaredIn(o.Function))
}

// lockWait reports whether a group waits for a mutex: the function it
// waits in is the one that takes the lock, which a holder stuck in a
// library callback (singleflight's Do, a sync.Once) holds.
func lockWait(s Suspect) bool {
	switch normState(s.State) {
	case "sync.Mutex.Lock", "sync.RWMutex.Lock", "sync.RWMutex.RLock":
		return true
	}
	return false
}

// incidentText formats an incident's figures once, for every view (the
// workbench prints these strings as they are).
func incidentText(inc Incident) *IncidentText {
	t := &IncidentText{Score: format.Score(inc.Score), FirstSeen: format.Time(inc.FirstSeen)}
	if inc.Goroutines > 0 {
		t.Goroutines = format.Count(inc.Goroutines, "goroutine")
	}
	switch {
	case inc.GoroutinesPerMin != 0:
		t.Rate = FormatRate(inc.GoroutinesPerMin, KindGoroutine)
	case inc.Goroutines == 0 && inc.BytesPerMin != 0:
		t.Rate = FormatRate(inc.BytesPerMin, KindHeap)
	}
	if inc.CallsPerMin > 0 {
		t.PerCall = format.Figure(inc.CallsPerMin) + " calls/min, " + format.Count(inc.PerCall, "goroutine") + " per call"
	}
	if inc.RetainedBytes > 0 {
		t.Retained = format.Bytes(float64(inc.RetainedBytes))
	}
	return t
}
