package samples

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// goroutine is one goroutine of a debug=2 goroutine dump.
type goroutine struct {
	ID      int64
	State   string   // wait reason without minutes or suffixes
	Frames  []string // function names, innermost first
	Creator string   // function of the "created by" line
}

// topMain returns the innermost main-package frame, or "".
func (g goroutine) topMain() string {
	for _, f := range g.Frames {
		if strings.HasPrefix(f, "main.") {
			return f
		}
	}
	return ""
}

// parkedIn reports whether fn is the goroutine's innermost main-package
// frame or, for a goroutine running only library code (a client-go
// informer's), any of its frames.
func (g goroutine) parkedIn(fn string) bool {
	if m := g.topMain(); m != "" {
		return m == fn
	}
	for _, f := range g.Frames {
		if f == fn {
			return true
		}
	}
	return false
}

// parseDump reads a /debug/pprof/goroutine?debug=2 dump.
func parseDump(r io.Reader) ([]goroutine, error) {
	var (
		out  []goroutine
		cur  *goroutine
		line int
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line++
		text := sc.Text()
		switch {
		case strings.HasPrefix(text, "goroutine "):
			g, err := parseHeader(text)
			if err != nil {
				return nil, fmt.Errorf("dump line %d: %w", line, err)
			}
			out = append(out, g)
			cur = &out[len(out)-1]
		case text == "" || strings.HasPrefix(text, "\t") || cur == nil:
		case strings.HasPrefix(text, "created by "):
			name := strings.TrimPrefix(text, "created by ")
			if i := strings.Index(name, " in goroutine "); i >= 0 {
				name = name[:i]
			}
			cur.Creator = name
		default:
			name := text
			if i := strings.LastIndex(name, "("); i > 0 {
				name = name[:i]
			}
			cur.Frames = append(cur.Frames, name)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("dump line %d: %w", line, err)
	}
	return out, nil
}

// parseHeader parses "goroutine 7 [chan receive, 2 minutes]:".
func parseHeader(text string) (goroutine, error) {
	rest := strings.TrimPrefix(text, "goroutine ")
	sp := strings.IndexByte(rest, ' ')
	open, end := strings.IndexByte(rest, '['), strings.LastIndexByte(rest, ']')
	if sp < 0 || open < 0 || end < open {
		return goroutine{}, fmt.Errorf("bad goroutine header %q", text)
	}
	id, err := strconv.ParseInt(rest[:sp], 10, 64)
	if err != nil {
		return goroutine{}, fmt.Errorf("bad goroutine id in %q: %w", text, err)
	}
	state := rest[open+1 : end]
	if i := strings.Index(state, ", "); i >= 0 {
		state = state[:i]
	}
	if i := strings.Index(state, " ("); i >= 0 {
		state = state[:i]
	}
	return goroutine{ID: id, State: state}, nil
}
