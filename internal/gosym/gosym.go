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
