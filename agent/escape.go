package agent

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// escape makes outside text (alert labels, Origin headers) safe for one
// log line: control characters, invalid UTF-8 and backslashes are written
// as Go escapes, so a label cannot end a line or forge the next one.
func escape(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || r == '\\' || !unicode.IsPrint(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	q := strconv.QuoteToGraphic(s)
	return strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
}
