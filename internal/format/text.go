package format

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Names that come from the input — functions, files, labels, a node or
// executable name — may hold anything: escape sequences that retitle a
// terminal or rewrite the line above, NUL, invalid UTF-8, bidirectional
// overrides that make text read differently from what it is. Text and
// Lines write them visibly instead, as the reports do: a byte of invalid
// UTF-8 or a control character below U+0100 as \xNN, other unsafe runes
// as \uNNNN.

// Text returns s with every control character (newline and tab
// included), invalid UTF-8 byte and bidirectional override escaped.
func Text(s string) string { return escapeText(s, false) }

// Lines is Text that keeps newlines and tabs: for whole messages.
func Lines(s string) string { return escapeText(s, true) }

func escapeText(s string, lines bool) string {
	safe := func(r rune) bool {
		switch {
		case lines && (r == '\n' || r == '\t'):
			return true
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
			return false
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f:
			return false
		}
		return true
	}
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !safe(r) }) < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !safe(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case !safe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}
