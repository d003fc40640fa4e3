package analysis

import (
	"fmt"
	"sort"
)

// basisStacks is an origin found on another stack of the bundle that
// runs through the creator function: a heap profile's allocation stack
// or a dump's stack of a goroutine caught inside it.
const basisStacks = "stacks"

// processRoot reports whether a goroutine entry function says nothing of
// where in the user's code a goroutine was created: the main goroutine
// runs every call of the program's main loop.
func processRoot(fn string) bool { return fn == "main.main" || fn == "runtime.main" }

// callerThrough finds the user's frame that calls the creator function
// (the dump's "created by" frame) on the stacks the bundle holds (heap
// profile allocation stacks, CPU samples, dumps of goroutines caught in
// it), keeping only stacks whose root is one of the creator goroutines'
// entry functions when those are known. The most frequent user frame
// (ties: the name) is the origin; nil when no stack runs through the
// creator below a user frame.
func callerThrough(in *loaded, creator string, roots map[string]bool) (*Origin, []CreationHop) {
	if creator == "" {
		return nil, nil
	}
	type hit struct {
		f    Frame
		path []Frame // from the creator function up to the user's frame
		n    int64
	}
	by := map[string]*hit{}
	for _, sa := range in.st.stacksThrough(creator) {
		fr, at := in.st.framesOf(sa.id), sa.at
		if !underRoot(fr[at:], roots) {
			continue
		}
		f, i := userFrame(fr[at+1:])
		if i < 0 {
			continue
		}
		k := fmt.Sprintf("%s:%d", f.Function, f.Line)
		if by[k] == nil {
			by[k] = &hit{f: f, path: fr[at : at+1+i+1]}
		}
		by[k].n++
	}
	var best *hit
	var bestKey string
	for k, h := range by {
		if best == nil || h.n > best.n || h.n == best.n && k < bestKey {
			best, bestKey = h, k
		}
	}
	if best == nil {
		return nil, nil
	}
	o := &Origin{Function: best.f.Function, File: best.f.File, Line: best.f.Line, Basis: basisStacks}
	return o, []CreationHop{{Stack: best.path, Basis: basisStacks}}
}

// spawners are creator functions that run other code's go statements:
// the function a goroutine's entry closure is declared in made it.
var spawners = map[string]bool{
	"sync.(*WaitGroup).Go":                      true,
	"golang.org/x/sync/errgroup.(*Group).Go":    true,
	"golang.org/x/sync/errgroup.(*Group).TryGo": true,
}

// creatorFunctions are the functions whose callers made a site's
// goroutines: its "created by" function, and for a spawner the function
// its members' entry closure is declared in.
func creatorFunctions(s *site) []string {
	out := []string{s.creator}
	if !spawners[s.creator] {
		return out
	}
	for i := len(s.frames) - 1; i >= 0; i-- {
		p := declaredIn(s.frames[i].Function)
		if p == "" || spawners[p] {
			continue // the spawner's own wrapper (WaitGroup.Go.func1)
		}
		return append(out, p)
	}
	return out
}

// creatorRoots are the entry functions of a site's creator goroutines
// the bundle knows, and a note on those it does not (exited before the
// first dump).
func creatorRoots(in *loaded, s *site) (map[string]bool, []int64) {
	roots := map[string]bool{}
	var gone []int64
	for cg := range s.creatorGoids {
		if r := in.pop.recs[cg]; r != nil && r.entry != "" {
			roots[r.entry] = true
		} else {
			gone = append(gone, cg)
		}
	}
	sort.Slice(gone, func(i, j int) bool { return gone[i] < gone[j] })
	return roots, gone
}

// unknownCallerText says why an origin is unknown and what would
// resolve it.
func unknownCallerText(creator string, roots map[string]bool, gone []int64) string {
	var rs []string
	for r := range roots {
		rs = append(rs, shortName(r))
	}
	sort.Strings(rs)
	d := "unknown caller"
	switch {
	case creator != "" && len(rs) > 0:
		d += fmt.Sprintf(": created from %s in goroutines running %v, and no stack of the bundle runs through %s below a frame of the user's code", shortName(creator), rs, shortName(creator))
	case creator != "" && len(gone) > 0:
		d += fmt.Sprintf(": created from %s by goroutine %d, which no dump shows (it had exited)", shortName(creator), gone[0])
	case creator != "":
		d += fmt.Sprintf(": created from %s", shortName(creator))
	}
	return d + "; a trace window (capture --trace) or eBPF creation stacks would show the user's frame that made them, and so would heap profiles whose allocation stacks run through the creator"
}

// underRoot reports whether a stack runs under one of the roots (any
// when none is known): the creator goroutine's entry function is among
// its callers.
func underRoot(fr []Frame, roots map[string]bool) bool {
	if len(roots) == 0 {
		return true
	}
	for _, f := range fr {
		if roots[f.Function] {
			return true
		}
	}
	return false
}
