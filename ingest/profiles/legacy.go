package profiles

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// legacyPrefixes start the text profiles pprof still parses (Go's debug=1
// forms and the older gperftools forms Go once wrote).
var legacyPrefixes = [][]byte{
	[]byte("heap profile:"),
	[]byte("--- contention:"),
	[]byte("--- contentionz "),
	[]byte("--- mutex:"),
	[]byte("--- threadz "),
	[]byte("--- Thread "),
	[]byte("--- heapz "),
}

// countProfile matches the first line of a debug=1 count profile
// ("goroutine profile: total 12", "goroutineleak profile: total 3",
// "threadcreate profile: total 9").
var countProfile = regexp.MustCompile(`\A[a-z]+ profile: total \d+\r?\n`)

// LooksLegacy reports whether head, the start of a file, is a legacy
// profile pprof reads: Go's debug=1 text, contention or threadz text, or
// a binary CPU profile of Go before 1.9.
func LooksLegacy(head []byte) bool {
	for _, p := range legacyPrefixes {
		if bytes.HasPrefix(head, p) {
			return true
		}
	}
	return countProfile.Match(head) || cpuHeader(head) >= 0
}

// Foreign names a profile format pprof reads that is not from a Go
// program (Java's), or returns "".
func Foreign(head []byte) string {
	if legacyForm(head) == formJava {
		if cpuHeader(head) == 1 {
			return "a Java CPU profile (profilez), not from a Go program"
		}
		return "a Java heapz or contentionz profile, not from a Go program"
	}
	return ""
}

// Legacy profile forms, from a profile's first bytes.
const (
	formMutex      = "mutex"      // "--- mutex:" (Go's debug=1 mutex profile)
	formContention = "contention" // "--- contention:", "--- contentionz"
	formText       = "text"       // other text: count, heap, threadz
	formCPU        = "cpu"        // the binary CPU profile Go wrote before 1.9
	formJava       = "java"       // a Java profile pprof also reads
)

// legacyForm says which legacy form data is in, "" for none (protobuf).
func legacyForm(data []byte) string {
	head := data[:min(len(data), 512)]
	switch {
	case bytes.HasPrefix(head, []byte("--- mutex:")):
		return formMutex
	case (bytes.HasPrefix(head, []byte("--- heapz ")) || bytes.HasPrefix(head, []byte("--- contentionz "))) && bytes.Contains(head, []byte("format = java")):
		return formJava
	case bytes.HasPrefix(head, []byte("--- contention")):
		return formContention
	}
	switch cpuHeader(head) {
	case 0:
		return formCPU
	case 1:
		return formJava
	}
	if len(head) > 0 && (head[0] >= 'a' && head[0] <= 'z' || head[0] == '-') {
		return formText
	}
	return ""
}

// cpuHeader recognises the header of a legacy binary CPU profile: five
// words 0, 3, kind, period, 0 in 32 or 64 bits of either byte order. It
// returns kind (0 for C++ and Go, 1 for Java), or -1.
func cpuHeader(head []byte) int {
	for _, size := range []int{8, 4} {
		for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			if len(head) < 5*size {
				continue
			}
			var w [5]uint64
			for i := range w {
				if size == 8 {
					w[i] = order.Uint64(head[i*8:])
				} else {
					w[i] = uint64(order.Uint32(head[i*4:]))
				}
			}
			if w[0] == 0 && w[1] == 3 && w[2] <= 1 && w[3] > 0 && w[4] == 0 {
				return int(w[2])
			}
		}
	}
	return -1
}

// symbolizeComments names the locations of a legacy text profile from the
// comment lines Go's debug=1 output prints under each sample
// ("#\t0x4de65d\tmain.f+0x1d\t/src/main.go:29"), which pprof skips: the
// stacks then read as functions rather than bare addresses.
func symbolizeComments(p *profile.Profile, data []byte) {
	type sym struct {
		fn, file string
		line     int64
	}
	syms := map[uint64]sym{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "#\t0x") {
			continue
		}
		var f []string
		for _, x := range strings.Split(line[2:], "\t") {
			if x != "" {
				f = append(f, x)
			}
		}
		if len(f) != 3 {
			continue
		}
		pc, err := strconv.ParseUint(f[0], 0, 64)
		if err != nil {
			continue
		}
		fn, _, _ := strings.Cut(f[1], "+0x")
		file, num, ok := cutLast(f[2], ":")
		n, err := strconv.ParseInt(num, 10, 64)
		if !ok || err != nil {
			continue
		}
		syms[pc] = sym{fn, file, n}
	}
	if len(syms) == 0 {
		return
	}
	funcs := map[sym]*profile.Function{}
	var nextID uint64
	for _, fn := range p.Function {
		nextID = max(nextID, fn.ID)
	}
	for _, loc := range p.Location {
		s, ok := syms[loc.Address]
		if !ok || len(loc.Line) > 0 {
			continue
		}
		key := sym{fn: s.fn, file: s.file}
		fn := funcs[key]
		if fn == nil {
			nextID++
			fn = &profile.Function{ID: nextID, Name: s.fn, SystemName: s.fn, Filename: s.file}
			p.Function = append(p.Function, fn)
			funcs[key] = fn
		}
		loc.Line = []profile.Line{{Function: fn, Line: s.line}}
	}
}

func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}
