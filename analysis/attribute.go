package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/leakscope/leakscope/analysis/flame"
)

// Bounds of attribution.
const (
	maxHops      = 32 // bounds a creation chain
	maxWalks     = 64 // member goroutines followed per group
	maxHopFrames = 6  // creation-stack frames a hop keeps when none is the user's
)

// attribution says where a goroutine group comes from: the creator's
// file and line, the user's frame that caused its creation (origin) with
// the real goroutine-by-goroutine chain leading there, its chain of
// creator functions, and the trace span open when its members were
// created.
type attribution struct {
	creatorFile string
	creatorLine int
	ancestry    []string
	origin      *Origin
	chain       []CreationHop
	// span is the task or region most sampled members were created in
	// ("" when no trace shows it); spanHits how many of spanOf sampled
	// members.
	span             string
	spanHits, spanOf int
	// unknown says, when no origin is found, why and what would resolve
	// it.
	unknown string
}

// attribute finds where the goroutines of a site were created.
func attribute(in *loaded, s *site) attribution {
	var a attribution
	// Creator's file and line: the frame of the creator function in the
	// dump's "created by" stack.
	if cs := s.creatorStackID; cs != 0 {
		for _, f := range in.st.framesOf(cs) {
			if f.Function == s.creator {
				a.creatorFile, a.creatorLine = f.File, f.Line
				break
			}
		}
	}
	a.origin, a.chain = findOrigin(in, s)
	if o := servedOrigin(in, s); o != nil {
		a.origin = o // the creation chain stays, as context
	}
	if a.origin == nil && s.creator != "" {
		roots, gone := creatorRoots(in, s)
		a.unknown = unknownCallerText(s.creator, roots, gone) + sourceCandidatesText(in, s)
	}
	a.ancestry = ancestryOf(a.chain)
	if len(a.ancestry) == 0 && s.creator != "" {
		a.ancestry = []string{s.creator}
	}
	a.span, a.spanHits, a.spanOf = creationSpan(in, s)
	return a
}

// creationSpan is the span open on the creator when most sampled members
// were created, from the trace.
func creationSpan(in *loaded, s *site) (string, int, int) {
	spanCount := map[string]int{}
	for _, g := range s.goids {
		t := in.tg[g]
		if t == nil || t.Created == 0 || t.Parent == 0 {
			continue
		}
		if sp := in.ix.openAt(t.Parent, t.Created); sp != nil {
			spanCount[sp.Kind+" "+sp.Name]++
		}
	}
	best := topKey(toInt64(spanCount))
	if best == "" {
		return "", 0, 0
	}
	return best, spanCount[best], len(s.goids)
}

// walk is one creation chain followed from a member goroutine up, with
// the origin it found.
type walk struct {
	hops   []CreationHop
	origin *Origin
	weight int64
}

// findOrigin follows the creation of sampled members goroutine by
// goroutine (by goid, never by function name) until a creation stack
// shows a frame of the user's own code, and returns the origin most
// members share with the chain of one of them. Members created during a
// trace window (or seen by eBPF) start from their own creation stack;
// the others from the dump's "created by" frame and creator goroutine.
func findOrigin(in *loaded, s *site) (*Origin, []CreationHop) {
	var walks []walk
	seen := map[int64]bool{}
	for _, g := range append(append([]int64(nil), s.spread...), s.goids...) {
		if len(walks) == maxWalks {
			break
		}
		if seen[g] {
			continue
		}
		seen[g] = true
		r := in.pop.recs[g]
		if r == nil || r.creation == 0 {
			continue
		}
		hops, o := climb(in, r.creation, r.creationBasis, r.parent)
		walks = append(walks, walk{hops: hops, origin: o, weight: 1})
	}
	if len(walks) == 0 {
		// Dumps only: the group's "created by" frame, from each creator
		// goroutine its members name.
		cgs := make([]int64, 0, len(s.creatorGoids))
		for cg := range s.creatorGoids {
			cgs = append(cgs, cg)
		}
		sort.Slice(cgs, func(i, j int) bool { return cgs[i] < cgs[j] })
		for _, cg := range cgs {
			hops, o := climb(in, s.creatorStackID, basisDump, cg)
			walks = append(walks, walk{hops: hops, origin: o, weight: 1})
		}
		if len(cgs) == 0 && s.creatorStackID != 0 {
			hops, o := climb(in, s.creatorStackID, basisDump, 0)
			walks = append(walks, walk{hops: hops, origin: o, weight: 1})
		}
	}
	o, chain := majority(walks)
	if o == nil || o.Basis == basisEntry {
		// Dumps only, or a creator known by its entry function alone:
		// another stack through the creator function may show the user's
		// frame that called it.
		roots, _ := creatorRoots(in, s)
		for _, fn := range creatorFunctions(s) {
			if c, path := callerThrough(in, fn, roots); c != nil {
				if len(chain) > 0 {
					// The creator goroutine's hop, with the stack that
					// shows which of its calls ran the creator.
					hop := chain[0]
					hop.Stack, hop.Basis = path[0].Stack, basisStacks
					c.Goid = hop.Goid
					return c, []CreationHop{hop}
				}
				return c, path
			}
		}
		if c, _ := callerInSource(in, s); c != nil {
			hop := CreationHop{Stack: []Frame{{Function: c.Function, File: c.File, Line: c.Line}}, Basis: basisSource}
			if len(chain) > 0 {
				hop.Goid, hop.Function = chain[0].Goid, chain[0].Function
				c.Goid = hop.Goid
			}
			return c, []CreationHop{hop}
		}
	}
	return o, chain
}

// majority picks, among the walks whose origin has the most direct
// basis (a full creation stack beats a "created by" line, which beats a
// creator's entry function), the origin with the most weight (ties: the
// name) and a chain that leads to it.
func majority(walks []walk) (*Origin, []CreationHop) {
	type tally struct {
		w     int64
		first *walk
	}
	best := 3
	for _, w := range walks {
		if w.origin != nil {
			best = min(best, basisRank(w.origin.Basis))
		}
	}
	byKey := map[string]*tally{}
	var total int64
	for i := range walks {
		w := &walks[i]
		if w.origin != nil && basisRank(w.origin.Basis) != best {
			continue
		}
		total += w.weight
		if w.origin == nil {
			continue
		}
		k := fmt.Sprintf("%s:%d", w.origin.Function, w.origin.Line)
		t := byKey[k]
		if t == nil {
			t = &tally{first: w}
			byKey[k] = t
		}
		t.w += w.weight
		if basisRank(w.origin.Basis) < basisRank(t.first.origin.Basis) {
			t.first = w
		}
	}
	var top *tally
	var topKey string
	for k, t := range byKey {
		if top == nil || t.w > top.w || t.w == top.w && k < topKey {
			top, topKey = t, k
		}
	}
	if top == nil {
		if len(walks) > 0 {
			return nil, walks[0].hops
		}
		return nil, nil
	}
	o := *top.first.origin
	o.Members, o.Sampled = top.w, total
	return &o, top.first.hops
}

// basisRank orders bases from the most to the least direct.
func basisRank(b string) int {
	switch b {
	case basisTrace, basisEBPF:
		return 0
	case basisDump, basisGopc:
		return 1
	}
	return 2
}

// climb follows one chain up from a creation stack (in creator goroutine
// parent): each hop is a real goroutine. It stops at the first creation
// stack holding a user frame (the origin), or at a creator goroutine
// whose own entry function is the user's when the stack inside it is not
// known (a weaker origin).
func climb(in *loaded, stack int64, basis string, parent int64) ([]CreationHop, *Origin) {
	var hops []CreationHop
	var origin *Origin
	seen := map[int64]bool{}
	for depth := 0; depth < maxHops; depth++ {
		frames := creationFrames(in.st.framesOf(stack))
		if basis == basisEBPF && len(frames) < 2 {
			// Without eBPF creation stacks the probe records only the
			// go statement's PC: like a dump's "created by" line.
			basis = basisGopc
		}
		hop := CreationHop{Goid: parent, Stack: hopStack(frames), Basis: basis}
		r := in.pop.recs[parent]
		if r != nil {
			hop.Function = r.entry
		}
		hops = append(hops, hop)
		if origin == nil {
			if f, i := userFrame(frames); i >= 0 {
				origin = &Origin{Function: f.Function, File: f.File, Line: f.Line, Basis: basis, Goid: parent}
			} else if r != nil && r.entry != "" && !processRoot(r.entry) && in.st.code.of(r.entry, "").owner == OwnerUser && basisRank(basis) > 0 {
				origin = &Origin{Function: r.entry, Basis: basisEntry, Goid: parent}
			}
		}
		if r == nil || parent == 0 || seen[parent] {
			break
		}
		seen[parent] = true
		switch {
		case r.creation != 0:
			stack, basis = r.creation, r.creationBasis
		case r.createdBy != 0:
			stack, basis = r.createdBy, basisDump
		default:
			stack, basis = 0, basisDump
		}
		parent = r.parent
		if stack == 0 && parent == 0 {
			break
		}
	}
	return hops, origin
}

// creationFrames drops the runtime's own frames (newproc, systemstack)
// from the leaf of a creation stack, so it starts at the function that
// ran the go statement.
func creationFrames(fr []Frame) []Frame {
	for i, f := range fr {
		if !strings.HasPrefix(f.Function, "runtime.") || f.Function == "runtime.main" {
			return fr[i:]
		}
	}
	return fr
}

// hopStack is the part of a creation stack a chain shows: from the go
// statement up to the innermost user frame, or at most maxHopFrames.
func hopStack(fr []Frame) []Frame {
	if _, i := userFrame(fr); i >= 0 {
		return fr[:i+1]
	}
	return fr[:min(len(fr), maxHopFrames)]
}

// ancestryOf lists the functions of a creation chain, nearest first: at
// each hop the function that ran the go statement, the user's frame it
// was called from (when the stack shows one), then the creator
// goroutine's entry function.
func ancestryOf(chain []CreationHop) []string {
	var out []string
	add := func(fn string) {
		if fn != "" && (len(out) == 0 || out[len(out)-1] != fn) {
			out = append(out, fn)
		}
	}
	for _, h := range chain {
		if len(h.Stack) > 0 {
			add(h.Stack[0].Function)
			if f, i := userFrame(h.Stack); i > 0 {
				add(f.Function)
			}
		}
		add(h.Function)
	}
	return out
}

// chainText renders a chain for evidence: "goroutine 812
// (main.(*controller).worker) in main.(*controller).reconcile →
// informers.(*sharedInformerFactory).Start".
func chainText(chain []CreationHop) string {
	var parts []string
	for _, h := range chain {
		var b strings.Builder
		if h.Goid != 0 {
			fmt.Fprintf(&b, "goroutine %d", h.Goid)
		} else {
			b.WriteString("a goroutine")
		}
		if h.Function != "" {
			fmt.Fprintf(&b, " (%s)", shortName(h.Function))
		}
		if len(h.Stack) > 0 {
			b.WriteString(" in ")
			b.WriteString(stackPath(h.Stack))
		}
		parts = append(parts, b.String())
	}
	return strings.Join(parts, ", created by ")
}

// stackPath renders a creation stack from its outermost user frame (or
// its caller-most frame kept) down to the go statement.
func stackPath(fr []Frame) string {
	var names []string
	for i := len(fr) - 1; i >= 0; i-- {
		names = append(names, shortName(fr[i].Function))
	}
	return strings.Join(names, " → ")
}

// shortName is [flame.ShortName].
func shortName(fn string) string { return flame.ShortName(fn) }

// originText explains an origin for the evidence list.
func originText(o *Origin, chain []CreationHop) string {
	where := o.Function
	if o.Line > 0 {
		where = fmt.Sprintf("%s (%s:%d)", o.Function, o.File, o.Line)
	}
	var basis string
	switch o.Basis {
	case basisTrace:
		basis = "the trace's goroutine-creation stacks"
	case basisEBPF:
		basis = "eBPF goroutine-creation stacks"
	case basisDump:
		basis = "the dumps' \"created by\" lines"
	case basisAlloc:
		basis = "the heap profile's allocation stacks"
	case basisStacks:
		basis = "stacks of the bundle that run through the creator function below the user's frame (heap profile allocation stacks, dumps)"
	case basisSource:
		basis = "the program's own source as indexed when the bundle was made: the only function of it that calls into the library code the creator function is reached from (no stack of the bundle shows the call)"
	case basisGopc:
		basis = "eBPF go_create events (the go statement's function only)"
	case basisServed:
		basis = "the user's outermost frame on the goroutines' own stacks: a library's serving loop, still running in the last dump, starts one per connection or request and calls it there, so the creation chain leads only to whoever started the server"
	default:
		basis = "the creator goroutine's entry function (no creation stack inside it is known)"
	}
	d := fmt.Sprintf("created from the user's code at %s, per %s", where, basis)
	if o.Sampled > 0 {
		d += fmt.Sprintf(" (%d of %d followed members)", o.Members, o.Sampled)
	}
	if len(chain) > 0 {
		d += ": " + chainText(chain)
	}
	return d
}
