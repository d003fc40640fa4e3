package analysis

import (
	"fmt"
	"go/ast"
	"sort"
	"strings"

	"github.com/leakscope/leakscope/ingest/schema"
)

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
		return "; the bundle holds no index of the program's own calls, which names the caller when only one function can have made them (it is made when capture or ingest can read the main package's source: ingest --source-root DIR)"
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
		if baseTypeName(r.Type) == t {
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
			if cl, ok := e.(*ast.CompositeLit); ok && baseTypeName(cl.Type) == t && i < len(v.Names) {
				out = append(out, sourceCall{function: pkg + "." + v.Names[i].Name, callee: pkg + "." + t, kind: schema.CallKindLiteral})
			}
		}
	}
	return out
}
