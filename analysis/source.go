package analysis

import (
	"fmt"
	"go/scanner"
	"go/token"
	"regexp"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// Source quote statuses ([SourceQuote.Status]).
const (
	SourceOK          = "ok"
	SourceChanged     = "changed"
	SourceUnavailable = "unavailable"
)

// quoteAround is how many lines around the quoted one a quote keeps.
const quoteAround = 3

// sourceCode is the bundle's source_code table: the Go source of the
// functions its frames name, as read when the bundle was made (capture or
// ingest). The analysis never reads source from this machine's disk:
// reports quote what was built, or say the source is unavailable or
// changed.
type sourceCode struct {
	funcs map[[2]string]*funcSource // by file, function
}

// funcSource is one function's snapshot.
type funcSource struct {
	start, end     int
	lines          []string
	sha            string
	status, detail string
	code           map[int]bool // lines holding code, not only comments or braces
}

// readSourceCode reads the source_code table (none: every quote is
// unavailable).
func readSourceCode(b *bundle.Bundle, mem memory.Allocator) (*sourceCode, error) {
	c := &sourceCode{funcs: map[[2]string]*funcSource{}}
	err := b.ReadTable(schema.TableSourceCode, mem, func(rec arrow.Record) error {
		k := cols{rec}
		file, fn, status := k.str(schema.ColFile), k.str(schema.ColFunction), k.str(schema.ColStatus)
		start, end, text := k.i64(schema.ColStartLine), k.i64(schema.ColEndLine), k.str(schema.ColText)
		sha, detail := k.str(schema.ColFileSHA256), k.str(schema.ColDetail)
		for r := 0; r < int(rec.NumRows()); r++ {
			f := &funcSource{start: int(start(r)), end: int(end(r)), sha: sha(r), status: status(r), detail: detail(r)}
			if f.status == schema.SourceOK {
				f.lines = strings.Split(text(r), "\n")
			}
			c.funcs[[2]string{file(r), fn(r)}] = f
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read source code: %w", err)
	}
	return c, nil
}

// quote says what the bundle holds of the source line of frame f: the line
// and up to three around it inside its function, or why it cannot be
// quoted.
func (c *sourceCode) quote(f Frame) *SourceQuote {
	q := &SourceQuote{File: f.File, Line: f.Line, Function: f.Function}
	if f.File == "" || f.Line <= 0 {
		return nil
	}
	fs := c.funcs[[2]string{f.File, f.Function}]
	switch {
	case fs == nil:
		q.Status, q.Detail = SourceUnavailable, "the bundle holds no source of this function (not readable where it was captured or ingested)"
		return q
	case fs.status == schema.SourceUnavailable:
		q.Status, q.Detail = SourceUnavailable, fs.detail
		return q
	}
	q.SHA256 = fs.sha
	if fs.status != schema.SourceOK {
		q.Status, q.Detail = SourceChanged, fs.detail
		return q
	}
	if f.Line < fs.start || f.Line > fs.end {
		q.Status = SourceChanged
		q.Detail = fmt.Sprintf("line %d lies outside %s (lines %d–%d of the file as read): the file changed since the build", f.Line, f.Function, fs.start, fs.end)
		return q
	}
	if !fs.isCode(f.Line) {
		q.Status = SourceChanged
		q.Detail = fmt.Sprintf("line %d of the file as read is %q, not code: the file changed since the build", f.Line, strings.TrimSpace(fs.lines[f.Line-fs.start]))
		return q
	}
	q.Status = SourceOK
	for n := max(fs.start, f.Line-quoteAround); n <= min(fs.end, f.Line+quoteAround); n++ {
		if i := n - fs.start; i < len(fs.lines) {
			q.Lines = append(q.Lines, SourceLine{Line: n, Text: fs.lines[i]})
		}
	}
	return q
}

// isCode reports whether line n of the function holds a token other than
// comments and brackets.
func (fs *funcSource) isCode(n int) bool {
	if fs.code == nil {
		fs.code = map[int]bool{}
		src := []byte(strings.Join(fs.lines, "\n"))
		fset := token.NewFileSet()
		file := fset.AddFile("", -1, len(src))
		var s scanner.Scanner
		s.Init(file, src, nil, 0)
		for {
			pos, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			switch {
			case tok == token.LBRACE, tok == token.RBRACE, tok == token.RPAREN, tok == token.LPAREN:
			case tok == token.SEMICOLON && lit == "\n":
			default:
				fs.code[fs.start+fset.Position(pos).Line-1] = true
			}
		}
	}
	return fs.code[n]
}

// line returns the quoted line of frame f, trimmed, or "" when the bundle
// cannot quote it.
func (c *sourceCode) line(f Frame) string {
	q := c.quote(f)
	if q == nil || q.Status != SourceOK {
		return ""
	}
	for _, l := range q.Lines {
		if l.Line == f.Line {
			return strings.TrimSpace(l.Text)
		}
	}
	return ""
}

// function returns the text of the function around frame f, when the
// bundle holds it and f's line lies inside it.
func (c *sourceCode) function(f Frame) string {
	fs := c.funcs[[2]string{f.File, f.Function}]
	if fs == nil || fs.status != schema.SourceOK || f.Line < fs.start || f.Line > fs.end {
		return ""
	}
	return strings.Join(fs.lines, "\n")
}

// context returns the text rules match: the bodies of the location frame
// and up to two user frames below it.
func (c *sourceCode) context(frames []Frame, locIdx int) string {
	if locIdx < 0 {
		return ""
	}
	var parts []string
	for i := locIdx; i < len(frames) && len(parts) < 3; i++ {
		if isStd(frames[i]) {
			continue
		}
		if t := c.function(frames[i]); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

// sourceEvidence is the "source" evidence of a quote: the line, or why it
// cannot be quoted.
func sourceEvidence(q *SourceQuote) (Evidence, bool) {
	if q == nil {
		return Evidence{}, false
	}
	switch q.Status {
	case SourceOK:
		for _, l := range q.Lines {
			if l.Line == q.Line {
				return Evidence{Kind: "source", Detail: fmt.Sprintf("%s:%d: %s", q.File, q.Line, strings.TrimSpace(l.Text))}, true
			}
		}
	case SourceChanged:
		return Evidence{Kind: "source", Detail: fmt.Sprintf("%s:%d: source changed since build (%s)", q.File, q.Line, q.Detail)}, true
	}
	return Evidence{Kind: "source", Detail: fmt.Sprintf("%s:%d: source unavailable (%s)", q.File, q.Line, q.Detail)}, true
}

// Allocating assignments and the containers their variable goes into.
var (
	assignedAlloc = regexp.MustCompile(`^\s*(\w+)\s*:?=\s*(make\(|&|new\(|append\()`)
	intoMap       = `[\w\])]\[[^\]]+\]\s*=\s*%s\b`
	intoSlice     = `\bappend\([^,]+,\s*%s\b`
)

// holder finds, in the kept source of frame f's function, where the value
// allocated at f's line is put: a map written (m[k] = v) or a slice
// appended to (s = append(s, v)) after it. It returns that line and the
// container's kind ("map", "slice grown by append"), or 0.
func (c *sourceCode) holder(f Frame) (int, string) {
	fs := c.funcs[[2]string{f.File, f.Function}]
	if fs == nil || fs.status != schema.SourceOK || f.Line < fs.start || f.Line > fs.end {
		return 0, ""
	}
	m := assignedAlloc.FindStringSubmatch(fs.lines[f.Line-fs.start])
	if m == nil {
		return 0, ""
	}
	name := regexp.QuoteMeta(m[1])
	toMap := regexp.MustCompile(fmt.Sprintf(intoMap, name))
	toSlice := regexp.MustCompile(fmt.Sprintf(intoSlice, name))
	for i := f.Line - fs.start + 1; i < len(fs.lines); i++ {
		switch l := fs.lines[i]; {
		case toMap.MatchString(l):
			return fs.start + i, "map"
		case toSlice.MatchString(l):
			return fs.start + i, "slice grown by append"
		}
	}
	return 0, ""
}
