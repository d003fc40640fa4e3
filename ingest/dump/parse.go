package dump

import (
	"bytes"
	"sort"
	"strconv"
	"strings"
)

// header is the parsed form of "goroutine N [state, extras...]:".
type header struct {
	id      int64
	state   []byte
	minutes int64
	locked  bool
	bubble  int64
	labels  []byte // raw "{...}" content after "labels:", nil if absent
}

var (
	goroutinePrefix = []byte("goroutine ")
	labelsMark      = []byte(" labels:{")
	scanMark        = []byte(" (scan)")
)

// parseHeader parses a goroutine header line. It reports false for any
// other line.
func parseHeader(line []byte, h *header) bool {
	if !bytes.HasPrefix(line, goroutinePrefix) || !bytes.HasSuffix(line, []byte("]:")) {
		return false
	}
	rest := line[len(goroutinePrefix):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || n > 19 || n >= len(rest) || rest[n] != ' ' {
		return false
	}
	id, err := strconv.ParseInt(string(rest[:n]), 10, 64)
	if err != nil {
		return false
	}
	rest = rest[n:]
	// Tracebacks at level system or crash add " gp=0x... m=N mp=0x..."
	// (or " m=nil") before the state.
	if bytes.HasPrefix(rest, []byte(" gp=")) {
		i := bytes.Index(rest, []byte(" ["))
		if i < 0 {
			return false
		}
		rest = rest[i:]
	}
	if !bytes.HasPrefix(rest, []byte(" [")) {
		return false
	}
	inner := rest[2 : len(rest)-2]
	*h = header{id: id}
	if i := bytes.Index(inner, labelsMark); i >= 0 {
		lab := inner[i+len(labelsMark):]
		if len(lab) == 0 || lab[len(lab)-1] != '}' {
			return false
		}
		h.labels = lab[:len(lab)-1]
		inner = inner[:i]
	}
	state := inner
	if i := bytes.Index(inner, []byte(", ")); i >= 0 {
		state = inner[:i]
		for extra := inner[i+2:]; len(extra) > 0; {
			var field []byte
			field, extra = cutComma(extra)
			switch {
			case bytes.Equal(field, []byte("locked to thread")):
				h.locked = true
			case bytes.HasSuffix(field, []byte(" minutes")):
				h.minutes, _ = strconv.ParseInt(string(field[:len(field)-len(" minutes")]), 10, 64)
			case bytes.HasPrefix(field, []byte("synctest bubble ")):
				h.bubble, _ = strconv.ParseInt(string(field[len("synctest bubble "):]), 10, 64)
			}
			// Other fields, from runtimes newer than this parser, are
			// ignored rather than refused.
		}
	}
	if i := bytes.Index(state, scanMark); i >= 0 {
		// The GC's transient scan bit says nothing about the goroutine.
		h.state = append(append(h.state[:0:0], state[:i]...), state[i+len(scanMark):]...)
	} else {
		h.state = state
	}
	return len(h.state) > 0
}

func cutComma(b []byte) (field, rest []byte) {
	if i := bytes.Index(b, []byte(", ")); i >= 0 {
		return b[:i], b[i+2:]
	}
	return b, nil
}

// parseLabels turns the runtime's `"k": "v", "k2": "v2"` into "k=v,k2=v2"
// sorted by key. It reports false on malformed input.
func parseLabels(b []byte) (string, bool) {
	s := string(b)
	type kv struct{ k, v string }
	var kvs []kv
	for len(s) > 0 {
		k, rest, ok := cutQuoted(s)
		if !ok || !strings.HasPrefix(rest, ": ") {
			return "", false
		}
		v, rest, ok := cutQuoted(rest[2:])
		if !ok {
			return "", false
		}
		kvs = append(kvs, kv{k, v})
		if rest == "" {
			break
		}
		if !strings.HasPrefix(rest, ", ") {
			return "", false
		}
		s = rest[2:]
	}
	sort.SliceStable(kvs, func(i, j int) bool { return kvs[i].k < kvs[j].k })
	var sb strings.Builder
	for i, p := range kvs {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(p.k)
		sb.WriteByte('=')
		sb.WriteString(p.v)
	}
	return sb.String(), true
}

// cutQuoted unquotes the Go string literal at the start of s.
func cutQuoted(s string) (val, rest string, ok bool) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil || q[0] != '"' {
		return "", "", false
	}
	v, err := strconv.Unquote(q)
	if err != nil {
		return "", "", false
	}
	return v, s[len(q):], true
}

// parseFunc splits a function line "pkg.f(0x1, {0x2, 0x3}, ...)" into the
// function name and its argument text. Arguments never hold parentheses,
// so the last "(" opens them; the name itself may hold parentheses
// ("pkg.(*T).m"), spaces ("type:.eq.struct { a int }") and brackets
// ("pkg.F[...]").
func parseFunc(line []byte) (name, args []byte, ok bool) {
	if len(line) < 3 || line[len(line)-1] != ')' || line[0] == '\t' || line[0] == ' ' {
		return nil, nil, false
	}
	i := bytes.LastIndexByte(line, '(')
	if i <= 0 {
		return nil, nil, false
	}
	return line[:i], line[i+1 : len(line)-1], true
}

// fileLine is the parsed form of "\t/path/file.go:123 +0x1d fp=... sp=... pc=...".
type fileLine struct {
	file      []byte
	line      int64
	hasOffset bool // "+0x..." present: not an inlined frame
}

// parseFileLine parses a frame's location line (with its leading tab).
// The cgo symbolizer forms "\tfile:line pc=0x..." and "\tpc=0x..." are
// accepted too; the latter has no file.
func parseFileLine(line []byte, fl *fileLine) bool {
	if len(line) < 2 || line[0] != '\t' {
		return false
	}
	s := line[1:]
	*fl = fileLine{}
	if bytes.HasPrefix(s, []byte("pc=0x")) {
		return true
	}
	// The line number follows the last ':' that is followed by digits and
	// then the end or a space; file names may hold ':' and spaces.
	for end := len(s); end > 0; {
		i := bytes.LastIndexByte(s[:end], ':')
		if i <= 0 {
			return false
		}
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j > i+1 && j-i-1 <= 18 && (j == len(s) || s[j] == ' ') {
			var n int64
			for _, c := range s[i+1 : j] {
				n = n*10 + int64(c-'0')
			}
			fl.file = s[:i]
			fl.line = n
			fl.hasOffset = bytes.HasPrefix(s[j:], []byte(" +0x"))
			return true
		}
		end = i
	}
	return false
}

// parseElided recognises "...additional frames elided..." (count 0) and
// "...N frames elided...".
func parseElided(line []byte) (n int, ok bool) {
	if bytes.Equal(line, []byte("...additional frames elided...")) {
		return 0, true
	}
	if !bytes.HasPrefix(line, []byte("...")) || !bytes.HasSuffix(line, []byte(" frames elided...")) {
		return 0, false
	}
	v, err := strconv.Atoi(string(line[3 : len(line)-len(" frames elided...")]))
	if err != nil || v < 0 {
		return 0, false
	}
	return v, true
}

// parseCreatedBy parses "created by f" and "created by f in goroutine N".
func parseCreatedBy(line []byte) (fn []byte, goid int64, ok bool) {
	rest, found := bytes.CutPrefix(line, []byte("created by "))
	if !found || len(rest) == 0 {
		return nil, 0, false
	}
	if i := bytes.LastIndex(rest, []byte(" in goroutine ")); i > 0 {
		if v, err := strconv.ParseInt(string(rest[i+len(" in goroutine "):]), 10, 64); err == nil && v >= 0 {
			return rest[:i], v, true
		}
	}
	return rest, 0, true
}

// parseAncestor recognises "[originating from goroutine N]:".
func parseAncestor(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("[originating from goroutine "))
	if !ok || !bytes.HasSuffix(rest, []byte("]:")) {
		return false
	}
	_, err := strconv.ParseInt(string(rest[:len(rest)-2]), 10, 64)
	return err == nil
}
