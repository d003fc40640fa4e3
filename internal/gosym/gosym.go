// Package gosym reads the function names Go's tracebacks, profiles and
// symbol tables print (leaf: it imports nothing of ours).
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

// ClosureDepth is how many literals a symbol's function is nested in:
// main.F.func1 is 1, main.F.func1.2 is 2, main.F 0.
func ClosureDepth(fn string) int {
	segs := strings.Split(StripTypeArgs(fn), ".")
	n := 0
	for i := len(segs) - 1; i > 0; i-- {
		s := segs[i]
		switch {
		case strings.Trim(s, "0123456789") == "" && s != "":
			if segs[i-1] == "init" {
				return n // main.init.0: a numbered init, not a literal
			}
			n++
		case strings.HasPrefix(s, "func") && strings.Trim(s[4:], "0123456789") == "" && len(s) > 4:
			return n + 1
		default:
			return n
		}
	}
	return n
}
