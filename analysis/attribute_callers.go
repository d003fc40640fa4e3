package analysis

import (
	"fmt"
	"go/ast"
	"sort"
	"strings"

	"github.com/leakscope/leakscope/ingest/schema"
	"github.com/leakscope/leakscope/internal/gosym"
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

// basisServed is the basis of an origin read from the members' own
// stacks: a library's serving loop (net/http's Serve, a gRPC server's
// stream loop) starts them per connection or request and calls the
// user's code on them.
const basisServed = "served"

// servedOrigin is the origin of goroutines a library's serving loop
// starts per connection or request: the outermost frame of the user's
// code on the members' own stack (the handler the loop called), when
// the function holding the go statement is a library's and most
// creator goroutines are still running it (the loop that accepts the
// next connection, read from the latest dump). Their creation chain then
// leads to whoever started the server, which says nothing of the leak;
// it is kept as context. Nil when the site is not such a group.
func servedOrigin(in *loaded, s *site) *Origin {
	if s.creator == "" || in.detail == nil || len(s.creatorGoids) == 0 {
		return nil
	}
	if in.st.code.of(s.creator, "").owner == OwnerUser {
		return nil
	}
	handler := -1
	for i := len(s.frames) - 1; i >= 0; i-- {
		if isUser(s.frames[i]) {
			handler = i
			break
		}
	}
	if handler < 0 {
		return nil
	}
	var serving, all, loop int64
	for cg, n := range s.creatorGoids {
		all += n
		g := in.detail.byGoid[cg]
		if g == nil || !runs(in.st.framesOf(g.stack), s.creator) {
			continue
		}
		serving += n
		loop = cg
	}
	if 2*serving <= all {
		return nil
	}
	f := s.frames[handler]
	return &Origin{Function: f.Function, File: f.File, Line: f.Line, Basis: basisServed, Goid: loop, Members: serving, Sampled: all}
}

// runs reports whether a stack has a frame of function fn.
func runs(frames []Frame, fn string) bool {
	for _, f := range frames {
		if f.Function == fn {
			return true
		}
	}
	return false
}

// basisSource is an origin found in the program's own source: the only
// function of it whose calls reach the creator function through the
// library's code.
const basisSource = "source"

// maxSourceCandidates bounds the candidate functions an unknown origin
// names.
const maxSourceCandidates = 5

// callerInSource finds, where no stack shows it, the function of the
// program's own source that made a site's goroutines: the creator
// function's package source tells which of its exported functions and
// types reach the creator, and the program's call index where it calls
// those functions or builds those types. One function: its origin.
// Several: no origin, and the candidates (at most maxSourceCandidates).
func callerInSource(in *loaded, s *site) (*Origin, []sourceCall) {
	if in.src == nil || len(in.src.calls) == 0 || s.creator == "" {
		return nil, nil
	}
	file := creatorFile(in, s)
	p := in.libSource().pkgAt(file)
	if p == nil {
		return nil, nil
	}
	pkg, recv, _, _ := splitFunc(s.creator)
	key := declKey(s.creator)
	if p.decls[key] == nil {
		return nil, nil
	}
	var entries map[string]bool
	var sites []sourceCall
	if recv != "" {
		// A method's goroutines serve one value of its type: whoever made
		// that value made them, the library itself included.
		entries = p.makersOf(recv, pkg)
		sites = p.ownValues(recv, pkg)
	} else {
		entries = p.entriesReaching(key, pkg)
	}
	for _, c := range in.src.calls {
		if entries[c.kind+" "+c.callee] {
			sites = append(sites, c)
		}
	}
	sort.Slice(sites, func(i, j int) bool {
		a, b := sites[i], sites[j]
		if a.function != b.function {
			return a.function < b.function
		}
		return a.file < b.file || a.file == b.file && a.line < b.line
	})
	byFn := firstPerFunction(sites)
	if len(byFn) != 1 || in.src.callsPartial || byFn[0].file == "" {
		// A partial index may lack the call that made them; a value
		// of the library's own is no caller in the user's code.
		return nil, byFn[:min(len(byFn), maxSourceCandidates)]
	}
	c := byFn[0]
	return &Origin{Function: c.function, File: c.file, Line: c.line, Basis: basisSource}, byFn
}

// firstPerFunction keeps the first of sorted call sites of each function.
func firstPerFunction(sites []sourceCall) []sourceCall {
	var out []sourceCall
	for _, c := range sites {
		if len(out) == 0 || out[len(out)-1].function != c.function {
			out = append(out, c)
		}
	}
	return out
}

// creatorFile is the file of a site's creator frame ("" unknown).
func creatorFile(in *loaded, s *site) string {
	if s.creatorStackID == 0 {
		return ""
	}
	for _, f := range in.st.framesOf(s.creatorStackID) {
		if f.Function == s.creator {
			return f.File
		}
	}
	return ""
}

// libSource is the bundle's library source reader, made on first use.
func (in *loaded) libSource() *libSource {
	if in.lib == nil {
		in.lib = newLibSource(in.b.Manifest.Target.GoVersion)
		in.lib.frames = framesByFile(in.st)
	}
	return in.lib
}

// entriesReaching lists, as "call pkg.F" and "literal pkg.T", the
// exported functions of the package from which the declaration key is
// reached through the package's own code, and the exported types with a
// method that reaches it. A body reaches a declaration when it names a
// declaration that does: a function by its name, a method by its name
// on any receiver. That over-approximates, so no caller the package's
// own calls lead from is left out.
func (p *libPkg) entriesReaching(key, pkg string) map[string]bool {
	reached := p.reachers(key)
	out := map[string]bool{}
	for k := range reached {
		t, m, isMethod := strings.Cut(k, ".")
		switch {
		case !isMethod && exported(t):
			out[schema.CallKindCall+" "+pkg+"."+t] = true
		case isMethod && exported(t) && m != "":
			out[schema.CallKindLiteral+" "+pkg+"."+t] = true
		}
	}
	return out
}

// reachers is the set of the package's declarations from which key is
// reached (key included).
func (p *libPkg) reachers(key string) map[string]bool {
	if p.namedBy == nil {
		p.namedBy = map[string][]string{}
		for k, d := range p.decls {
			for n := range namesIn(d) {
				p.namedBy[n] = append(p.namedBy[n], k)
			}
		}
	}
	reached := map[string]bool{key: true}
	work := []string{key}
	for len(work) > 0 {
		k := work[len(work)-1]
		work = work[:len(work)-1]
		name := k
		if _, m, ok := strings.Cut(k, "."); ok {
			name = "." + m
		}
		for _, c := range p.namedBy[name] {
			if !reached[c] {
				reached[c] = true
				work = append(work, c)
			}
		}
	}
	return reached
}

// namesIn lists what a declaration's body names: identifiers ("F") and
// selected names (".M").
func namesIn(d *ast.FuncDecl) map[string]bool {
	out := map[string]bool{}
	if d.Body == nil {
		return out
	}
	ast.Inspect(d.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			out["."+x.Sel.Name] = true
		case *ast.Ident:
			out[x.Name] = true
		}
		return true
	})
	return out
}

// sourceCandidatesText names the functions of the program's source that
// may have made a site's goroutines, or says that the bundle has no
// index of that source and how to get one.
func sourceCandidatesText(in *loaded, s *site) string {
	if in.src == nil || len(in.src.callFiles) == 0 {
		return "; the bundle holds no index of the program's own calls, which names the caller when only one function can have made them (it is made when capture or ingest can read the program's own source: ingest --source-root DIR)"
	}
	_, cands := callerInSource(in, s)
	if len(cands) == 0 {
		return ""
	}
	var parts []string
	for _, c := range cands {
		if c.file == "" {
			parts = append(parts, fmt.Sprintf("the library's own %s", shortName(c.function)))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (%s:%d, %s)", shortName(c.function), baseName(c.file), c.line, shortName(c.callee)))
	}
	return "; by the program's source they may have been made by " + strings.Join(parts, " or ")
}

// makersOf lists, as entriesReaching does, what makes a value of the
// package's type t: a literal of it (or new), and the exported
// functions whose results are a t or a *t.
func (p *libPkg) makersOf(t, pkg string) map[string]bool {
	out := map[string]bool{}
	if exported(t) {
		out[schema.CallKindLiteral+" "+pkg+"."+t] = true
	}
	for name, d := range p.funcs {
		if exported(name) && returns(d, t) {
			out[schema.CallKindCall+" "+pkg+"."+name] = true
		}
	}
	return out
}

// returns reports whether a function's results hold a t or a *t.
func returns(d *ast.FuncDecl, t string) bool {
	if d.Type.Results == nil {
		return false
	}
	for _, r := range d.Type.Results.List {
		if gosym.BaseTypeName(r.Type) == t {
			return true
		}
	}
	return false
}

// ownValues lists the package-level variables of the package itself
// that hold a t it builds (net/http's DefaultTransport), as call sites
// of the library: candidates the user's code did not make.
func (p *libPkg) ownValues(t, pkg string) []sourceCall {
	var out []sourceCall
	for _, v := range p.vars {
		for i, val := range v.Values {
			e := val
			if u, ok := e.(*ast.UnaryExpr); ok {
				e = u.X
			}
			if cl, ok := e.(*ast.CompositeLit); ok && gosym.BaseTypeName(cl.Type) == t && i < len(v.Names) {
				out = append(out, sourceCall{function: pkg + "." + v.Names[i].Name, callee: pkg + "." + t, kind: schema.CallKindLiteral})
			}
		}
	}
	return out
}
