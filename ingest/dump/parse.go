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
	// labelsBare marks Go 1.27's form, where keys and values are quoted
	// only when they need it.
	labelsBare bool
}

var (
	goroutinePrefix = []byte("goroutine ")
	labelsMark      = []byte(" labels:{")
	scanMark        = []byte(" (scan)")
)

// parseHeader parses a goroutine header line. It reports false for any
// other line.
func parseHeader(line []byte, h *header) bool {
	if !bytes.HasPrefix(line, goroutinePrefix) {
		return false
	}
	// Go 1.27 prints labels after the brackets: "[chan receive] {app:
	// x, team: "a b"}:".
	var labels27 []byte
	if bytes.HasSuffix(line, []byte("}:")) {
		if i := bytes.Index(line, []byte("] {")); i > 0 {
			labels27 = line[i+3 : len(line)-2]
			line = append(line[:i+1:i+1], ':')
		}
	}
	if !bytes.HasSuffix(line, []byte("]:")) {
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
	if labels27 != nil {
		h.labels, h.labelsBare = labels27, true
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

// parseLabels turns the runtime's `"k": "v", "k2": "v2"` (or, bare,
// Go 1.27's `k: v, k2: "v 2"`) into "k=v,k2=v 2" sorted by key. It
// reports false on malformed input.
func parseLabels(b []byte, bare bool) (string, bool) {
	s := string(b)
	cut := cutQuoted
	if bare {
		cut = cutBare
	}
	type kv struct{ k, v string }
	var kvs []kv
	for len(s) > 0 {
		k, rest, ok := cut(s)
		if !ok || !strings.HasPrefix(rest, ": ") {
			return "", false
		}
		v, rest, ok := cut(rest[2:])
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

// cutBare takes a key or value of Go 1.27's label form from the start of
// s: a quoted string, or letters, digits, '.', '/' and '_' (possibly none).
func cutBare(s string) (val, rest string, ok bool) {
	if strings.HasPrefix(s, `"`) {
		return cutQuoted(s)
	}
	i := 0
	for i < len(s) {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '/' || c == '_') {
			break
		}
		i++
	}
	return s[:i], s[i:], true
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
	i := lastIndexByte(line, '(')
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
	var s []byte
	switch {
	case len(line) >= 2 && line[0] == '\t':
		s = line[1:]
	case len(line) >= 3 && line[0] == ' ' && line[1] == ' ':
		s = bytes.TrimLeft(line, " ") // spaces where a copy and paste replaced the tab
	default:
		return false
	}
	if len(s) == 0 {
		return false
	}
	*fl = fileLine{}
	if bytes.HasPrefix(s, []byte("pc=0x")) {
		return true
	}
	// The line number follows the last ':' that is followed by digits and
	// then the end or a space; file names may hold ':' and spaces.
	for end, first := len(s), true; end > 0; first = false {
		// The first search runs forward (see lastIndexByte); the rare
		// later ones backward, so that a line of many ':' costs its length
		// once, not once per ':'.
		var i int
		if first {
			i = lastIndexByte(s, ':')
		} else {
			i = bytes.LastIndexByte(s[:end], ':')
		}
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
			// "?? :0" and "??:0": a frame the symbolizer could not place.
			fl.file = bytes.TrimRight(s[:i], " ")
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

// headerAt finds a goroutine header in line, possibly indented: by
// whitespace (a dump pasted or printed indented), or as the first line of
// a test's log output ("    foo_test.go:12: goroutine 7 [running]:",
// whose next lines are indented four more spaces). It returns the
// indentation the block's other lines carry.
func headerAt(line []byte, h *header) (indent []byte, ok bool) {
	if parseHeader(line, h) {
		return nil, true
	}
	ws := len(line) - len(bytes.TrimLeft(line, " \t"))
	if ws == len(line) {
		return nil, false
	}
	rest := line[ws:]
	if parseHeader(rest, h) {
		return line[:ws], true
	}
	// A test log line: "name_test.go:12: ".
	i := bytes.Index(rest, []byte(".go:"))
	if i <= 0 || bytes.ContainsAny(rest[:i], " \t") {
		return nil, false
	}
	j := i + len(".go:")
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	if j == i+len(".go:") || !bytes.HasPrefix(rest[j:], []byte(": ")) || !parseHeader(rest[j+2:], h) {
		return nil, false
	}
	indent = append(append([]byte(nil), line[:ws]...), "    "...)
	return indent, true
}

// headerID returns the goroutine id of a (possibly cut) header line.
func headerID(line []byte) (int64, bool) {
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(line, " \t"), goroutinePrefix)
	if !ok {
		return 0, false
	}
	n := 0
	for n < len(rest) && n < 19 && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	id, err := strconv.ParseInt(string(rest[:n]), 10, 64)
	return id, err == nil
}

// couldBeHeader reports whether line, the last of a cut input, may be the
// start of a goroutine header line.
func couldBeHeader(line []byte) bool {
	t := bytes.TrimLeft(line, " \t")
	if len(t) >= 4 && bytes.HasPrefix(goroutinePrefix, t) {
		return true
	}
	rest, ok := bytes.CutPrefix(t, goroutinePrefix)
	if !ok {
		return false
	}
	// "goroutine 55", "goroutine 55 [chan se", "goroutine 55 gp=0x..."
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	return n > 0 && (n == len(rest) || rest[n] == ' ')
}

// couldContinue reports whether line, the last of a cut input inside a
// block in substate sub, may be the start of a line of that block.
func couldContinue(line []byte, sub int) bool {
	switch sub {
	case stFile, stCreatedFile, stAncFile:
		return len(line) == 0 || line[0] == '\t' || line[0] == ' '
	}
	if len(line) == 0 || couldBeHeader(line) {
		return true
	}
	for _, p := range [][]byte{[]byte("created by "), []byte("..."), []byte("[originating from goroutine "), unavailable, nonGo} {
		if bytes.HasPrefix(line, p) || bytes.HasPrefix(p, line) {
			return true
		}
	}
	return couldBeFunc(line)
}

// wholeLocation reports whether line, the last of an input that ends
// without a newline, is a whole location line: "\tFILE:LINE +0xPC", as a
// traceback's last frame ends (panicparse reads such a tail too). Cut
// anywhere before the pc, the line could still continue.
func wholeLocation(line []byte, sub int) bool {
	switch sub {
	case stFile, stCreatedFile, stAncFile:
	default:
		return false
	}
	if len(line) == 0 || line[0] != '\t' {
		return false
	}
	i := bytes.LastIndex(line, []byte(" +0x"))
	if i < 0 || i+4 == len(line) {
		return false
	}
	for _, c := range line[i+4:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	colon := bytes.LastIndexByte(line[:i], ':')
	if colon < 0 || colon+1 == i {
		return false
	}
	for _, c := range line[colon+1 : i] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// couldBeFunc reports whether line may be the start of a function line:
// no space outside brackets before the arguments, no control characters.
func couldBeFunc(line []byte) bool {
	if c := line[0]; c == ' ' || c == '\t' {
		return false
	}
	depth := 0
	for _, c := range line {
		switch {
		case c < 0x20 || c == 0x7f:
			return false
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == '(' && depth == 0:
			return true // the rest may be arguments or a receiver
		case c == ' ' && depth <= 0, c == '=':
			return false
		}
	}
	return true
}

// blockEnders start lines that end a goroutine block by their form: what
// follows tracebacks in crash output, go test and go run output and race
// reports.
var blockEnders = [][]byte{
	exitStatus, []byte("FAIL\t"), []byte("ok  \t"), []byte("--- FAIL"), []byte("--- PASS"), []byte("=== RUN"),
	[]byte("-----"), []byte("PC=0x"), []byte("[signal "), []byte("signal arrived during"),
	raceFence, raceWarning, []byte("Found "), []byte("panic: "), []byte("fatal error: "),
}

var exitStatus = []byte("exit status ")

// endersByByte indexes blockEnders and preambles by their first byte:
// endsBlock runs on most lines of a dump.
var endersByByte = func() (t [256][][]byte) {
	for _, p := range append(append([][]byte{[]byte("FAIL"), []byte("PASS")}, blockEnders...), preambles...) {
		t[p[0]] = append(t[p[0]], p)
	}
	return t
}()

// endsBlock reports whether line ends a goroutine block by its form.
func endsBlock(line []byte) bool {
	if len(line) == 0 {
		return false
	}
	for _, p := range endersByByte[line[0]] {
		if bytes.HasPrefix(line, p) && (len(p) > 4 || len(line) == len(p)) {
			return true
		}
	}
	return line[0] >= 'a' && line[0] <= 'z' && registerLine(line)
}

// registerLine recognises a line of the register dump a crash prints
// after a thread's stack ("rax    0xca", "r8     0x0", "rflags 0x286").
func registerLine(line []byte) bool {
	name, val, ok := bytes.Cut(line, []byte(" "))
	if !ok || len(name) == 0 || len(name) > 7 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	val = bytes.TrimLeft(val, " ")
	if !bytes.HasPrefix(val, []byte("0x")) || len(val) == 2 {
		return false
	}
	for _, c := range val[2:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// cgoFrame recognises a C function name as a cgo symbolizer prints it,
// without parentheses ("crash", "??", "__libc_start_main"); the line after
// it must be its location for it to count as a frame.
func cgoFrame(line []byte) bool {
	if len(line) == 0 || len(line) > 512 || line[0] == ' ' || line[0] == '\t' || bytes.HasSuffix(line, []byte(":")) {
		return false
	}
	for _, c := range line {
		if c <= ' ' || c == 0x7f || c == '=' {
			return false
		}
	}
	return true
}

// looksLikeFrame recognises a stack location line ("\t/src/x.go:12
// +0x1d") outside any block: a sign of other output mixed into a
// traceback.
func looksLikeFrame(line []byte) bool {
	var fl fileLine
	return len(line) > 1 && line[0] == '\t' && parseFileLine(line, &fl) && fl.hasOffset
}

// lastIndexByte is bytes.LastIndexByte, found with forward searches: the
// standard one compares byte by byte from the end, and the lines it is
// used on end in long runs without c (" +0x1d fp=0x... sp=0x... pc=0x..."
// in crash tracebacks), which a vectorized forward search skips.
func lastIndexByte(b []byte, c byte) int {
	last := -1
	for off := 0; ; {
		i := bytes.IndexByte(b[off:], c)
		if i < 0 {
			return last
		}
		last = off + i
		off = last + 1
	}
}
