package analysis

import (
	"bufio"
	"os"
	"strings"
)

// maxSourceFile bounds the size of a source file the analysis reads.
const maxSourceFile = 4 << 20

// sourceCache reads Go source files named by frames, when they exist on
// this machine, to quote the line a goroutine is parked at and to let
// rules match the enclosing function's text.
type sourceCache map[string][]string

func (c sourceCache) lines(file string) []string {
	if l, ok := c[file]; ok {
		return l
	}
	c[file] = nil
	if file == "" || !strings.HasSuffix(file, ".go") {
		return nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() > maxSourceFile {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	c[file] = out
	return out
}

// line returns the trimmed source line, or "".
func (c sourceCache) line(file string, n int) string {
	l := c.lines(file)
	if n < 1 || n > len(l) {
		return ""
	}
	return strings.TrimSpace(l[n-1])
}

// function returns the text of the gofmt-formatted top-level function
// around line n: from the nearest "func " line above to the first "}" line
// below, at most 300 lines.
func (c sourceCache) function(file string, n int) string {
	l := c.lines(file)
	if n < 1 || n > len(l) {
		return ""
	}
	start := n - 1
	for start > 0 && !strings.HasPrefix(l[start], "func ") && n-1-start < 300 {
		start--
	}
	end := n - 1
	for end < len(l)-1 && l[end] != "}" && end-start < 300 {
		end++
	}
	return strings.Join(l[start:end+1], "\n")
}

// context returns the text rules match: the bodies of the location frame
// and up to two user frames below it.
func (c sourceCache) context(frames []Frame, locIdx int) string {
	if locIdx < 0 {
		return ""
	}
	var parts []string
	for i := locIdx; i < len(frames) && len(parts) < 3; i++ {
		if isStd(frames[i]) {
			continue
		}
		if t := c.function(frames[i].File, frames[i].Line); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}
