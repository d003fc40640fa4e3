// Package gosym reads the function names Go's tracebacks, profiles and
// symbol tables print, and names a declared method's receiver type as
// they spell it (leaf: it imports nothing of ours).
package gosym

import "strings"

// StripTypeArgs removes the type-argument lists of a generic function's
// name ("pkg.F[...]", "pkg.(*T[go.shape.int]).M" → "pkg.F",
// "pkg.(*T).M"), however deeply nested.
func StripTypeArgs(s string) string { return replaceTypeArgs(s, "") }

// ElideTypeArgs writes the type arguments of an instantiated generic
// function's name as "[...]", as goroutine dumps do: profiles and traces
// spell them out ("pkg.(*T[go.shape.struct { F other/pkg.X }]).M").
func ElideTypeArgs(s string) string { return replaceTypeArgs(s, "[...]") }

// replaceTypeArgs writes each outermost bracketed list of s as with.
func replaceTypeArgs(s, with string) string {
	if strings.IndexByte(s, '[') < 0 {
		return s
	}
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '[':
			if depth == 0 {
				b.WriteString(with)
			}
			depth++
		case r == ']' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ClosureDepth is how many literals a symbol's function is nested in
// (main.F.func1 is 1, main.F.func1.2 is 2, main.F 0): the length of
// [Enclosing], type arguments stripped.
func ClosureDepth(fn string) int { return len(Enclosing(StripTypeArgs(fn))) }

// Numbered reports a symbol segment the compiler names rather than the
// programmer: a literal's (func1, and 2 for one nested in it), a
// numbered init's (0), a go or defer statement's wrapper (gowrap1,
// deferwrap1), or the empty one of a package-level literal
// (pkg.glob..func1).
func Numbered(seg string) bool {
	for _, p := range []string{"func", "gowrap", "deferwrap"} {
		if n, ok := strings.CutPrefix(seg, p); ok && n != "" && digits(n) {
			return true
		}
	}
	return digits(seg)
}

// Wrapper reports the functions the compiler makes for a go or defer
// statement ("main.F.gowrap1", "main.F.deferwrap2").
func Wrapper(fn string) bool {
	last := fn[strings.LastIndexByte(fn, '.')+1:]
	for _, p := range []string{"gowrap", "deferwrap"} {
		if n, ok := strings.CutPrefix(last, p); ok {
			return n != "" && digits(n)
		}
	}
	return false
}

// ClosureParent is the function a literal is declared in
// ("main.F.func1.2" → "main.F"), "" for a function that is not a
// literal (a numbered init, "main.init.0", is not one).
func ClosureParent(fn string) string {
	enc := Enclosing(fn)
	if len(enc) == 0 {
		return ""
	}
	return enc[len(enc)-1]
}

// Enclosing lists the functions a literal is nested in, innermost first
// ("main.F.func1.2" → "main.F.func1", "main.F"); none for a function
// that is not a literal.
//
// The compiler (cmd/compile/internal/ir closureName) names a literal
// after the function it is made in: "func" and a number after a
// function that is no literal ("main.F.func1"), a bare number after one
// that is ("main.F.func1.2"). A literal of a function inlined into
// another carries the inlined function's name in between: G's literal
// inlined into the literal main.F.func1 is "main.F.func1.G.2", and a
// literal of main.F.func1 inlined into main.F is "main.F.F.func1.func4".
// So every trailing numbered segment is a literal's, whatever precedes
// it, save a numbered init's ("main.init.0"); the walk stops at the
// first segment a programmer named, and lists what an inlined name
// makes as it reads ("main.F.func1.G" for "main.F.func1.G.2").
func Enclosing(fn string) []string {
	var out []string
	for rest := fn; ; {
		i := strings.LastIndexByte(rest, '.')
		if i < 0 {
			return out
		}
		n, isFunc := strings.CutPrefix(rest[i+1:], "func")
		if n == "" || !digits(n) || !isFunc && strings.HasSuffix(rest[:i], ".init") {
			return out // not a literal's segment, or a numbered init's
		}
		rest = rest[:i]
		out = append(out, rest)
	}
}

// digits reports a string of decimal digits only (or none).
func digits(s string) bool { return strings.Trim(s, "0123456789") == "" }
