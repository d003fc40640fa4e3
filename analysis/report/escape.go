package report

import (
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Names in a report — functions, files, spans, labels — come from the
// input, which anyone may have written: a function name can hold
// backticks, "<script>", NUL or a newline. They enter a document only
// through code (a code span) or lit (plain text), which mark them so each
// writer can render them in its own syntax: Markdown picks a fence no
// backtick run inside can close and backslash-escapes what Markdown would
// interpret; HTML escapes. Both writers also make control characters
// visible (\x00) and never let raw HTML through from any text.

// Marks around untrusted text, and the HTML writer's placeholder for code
// spans: Unicode private-use code points, which clean never lets through.
const (
	codeOpen  = '\uE000'
	codeClose = '\uE001'
	litOpen   = '\uE002'
	litClose  = '\uE003'
	slotMark  = '\uE004'
	partMark  = '\uE005'
)

// code marks s to be shown as a code span.
func code(s string) string {
	return string(codeOpen) + clean(s) + string(codeClose)
}

// lit marks s to be shown as plain text, with no markup taken from it.
func lit(s string) string {
	return string(litOpen) + clean(s) + string(litClose)
}

// clean replaces what must not reach a writer with visible escapes:
// control characters (newlines and tabs included), invalid UTF-8, the
// marks above, and the bidirectional overrides that can make text read
// differently from what it is.
func clean(s string) string {
	ok := true
	for _, r := range s {
		if !safeRune(r) {
			ok = false
			break
		}
	}
	if ok && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !safeRune(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case !safeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

func safeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return false
	case r >= codeOpen && r <= partMark:
		return false
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f:
		return false
	}
	return true
}

// cleanBlock is clean for preformatted text: newlines and tabs stay.
func cleanBlock(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		parts := strings.Split(l, "\t")
		for j, p := range parts {
			parts[j] = clean(p)
		}
		lines[i] = strings.Join(parts, "\t")
	}
	return strings.Join(lines, "\n")
}

// segment is a piece of document text: markup written by the report
// itself, or a marked code span or literal.
type segment struct {
	kind rune // 0 for markup, codeOpen or litOpen
	text string
}

// segments splits text at the marks code and lit put around untrusted
// parts. Markup is cleaned too, so nothing unescaped reaches a writer.
func segments(text string) []segment {
	var out []segment
	for text != "" {
		i := strings.IndexAny(text, string([]rune{codeOpen, litOpen}))
		if i < 0 {
			out = append(out, segment{0, clean(text)})
			break
		}
		if i > 0 {
			out = append(out, segment{0, clean(text[:i])})
		}
		open, n := utf8.DecodeRuneInString(text[i:])
		closer := string(codeClose)
		if open == litOpen {
			closer = string(litClose)
		}
		rest := text[i+n:]
		j := strings.Index(rest, closer)
		if j < 0 {
			j = len(rest)
		}
		out = append(out, segment{open, rest[:j]})
		text = rest[min(len(rest), j+len(closer)):]
	}
	return out
}

// mdCode writes s as a Markdown code span that nothing inside can close.
func mdCode(s string) string {
	if s == "" {
		return ""
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || (strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ")) {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdSpecial are the characters Markdown (with tables and
// strikethrough) may take as markup inside a line.
const mdSpecial = "\\`*_[]<>~&#!"

// mdLiteral backslash-escapes what Markdown would interpret in s.
func mdLiteral(s string) string {
	if !strings.ContainsAny(s, mdSpecial) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(mdSpecial, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mdMarkup makes report-written markup safe as Markdown: its `code` spans
// stay as they are, and outside them no raw HTML can start.
func mdMarkup(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range reCode.FindAllStringIndex(s, -1) {
		b.WriteString(strings.ReplaceAll(s[last:m[0]], "<", "&lt;"))
		b.WriteString(s[m[0]:m[1]])
		last = m[1]
	}
	b.WriteString(strings.ReplaceAll(s[last:], "<", "&lt;"))
	return b.String()
}

// render renders document text: the report's own markup through markup,
// with each marked part set aside as a placeholder and put back rendered
// by code or literal, so marks around a part (*em*, **bold**) still pair.
func render(text string, markup, code, literal func(string) string) string {
	var b strings.Builder
	var parts []string
	for _, seg := range segments(text) {
		switch seg.kind {
		case codeOpen:
			parts = append(parts, code(seg.text))
		case litOpen:
			parts = append(parts, literal(seg.text))
		default:
			b.WriteString(seg.text)
			continue
		}
		fmt.Fprintf(&b, "%c%d%c", partMark, len(parts)-1, partMark)
	}
	out := markup(b.String())
	if len(parts) == 0 {
		return out
	}
	return rePart.ReplaceAllStringFunc(out, func(m string) string {
		n, _ := strconv.Atoi(strings.Trim(m, string(partMark)))
		return parts[n]
	})
}

var rePart = regexp.MustCompile(string(partMark) + "[0-9]+" + string(partMark))

// mdInline renders document text as Markdown.
func mdInline(text string) string { return render(text, mdMarkup, mdCode, mdLiteral) }

// htmlInline renders document text as HTML.
func htmlInline(text string) string {
	return render(text, inline, func(s string) string { return "<code>" + html.EscapeString(s) + "</code>" }, html.EscapeString)
}

// mdFence returns a code fence longer than any backtick run in s.
func mdFence(s string) string {
	return strings.Repeat("`", max(3, longestRun(s, '`')+1))
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c rune) int {
	longest, run := 0, 0
	for _, r := range s {
		if r == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// plain returns document text without marks, for places that take no
// markup (an HTML title).
func plain(text string) string {
	var b strings.Builder
	for _, seg := range segments(text) {
		b.WriteString(seg.text)
	}
	return b.String()
}
