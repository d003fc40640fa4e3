package analysis

import (
	"fmt"
	"go/ast"
	"go/scanner"
	"go/token"
	"strings"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis/internal/gosrc"
	"github.com/leakscope/leakscope/analysis/internal/tables"
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
	// asyncTimers: the target was built before Go 1.23, whose timer
	// channels still deliver a value after Stop.
	asyncTimers bool
	// stmts memoises stmtAt: every goroutine parked at one line asks.
	stmts map[stmtKey]*waitStmt
	// params memoises paramWords by function.
	params map[string][]string
	// calls are the program's calls into other packages (the
	// source_calls table); callFiles the files indexed by module path.
	calls     []sourceCall
	callFiles map[string]int
	// callsPartial: a module's index stopped at its bounds.
	callsPartial bool
}

// funcSource is one function's snapshot.
type funcSource struct {
	start, end     int
	lines          []string
	sha            string
	status, detail string
	code           map[int]bool // lines holding code, not only comments or braces
	ast            *parsedFunc  // the text read as Go, on first use
}

// extraSource is what a report reads of the program's source beside the
// bundle's (see [Options.Source] and [Options.SourceCalls]).
type extraSource struct {
	code  []schema.SourceCode
	calls []schema.SourceCall
	files []gosrc.File
}

// readSourceCode reads the source_code table (none: every quote is
// unavailable), then lets each of extra's functions (read at report
// time) stand in for one the table holds no readable source of, and
// extra's call index for a bundle without one.
func readSourceCode(b *bundle.Bundle, mem memory.Allocator, extra extraSource) (*sourceCode, error) {
	c := &sourceCode{funcs: map[[2]string]*funcSource{}, asyncTimers: goBefore(b.Manifest.Target.GoVersion, 23)}
	if err := tables.ReadSourceCode(b, mem, c.add); err != nil {
		return nil, err
	}
	for _, r := range extra.code {
		if cur := c.funcs[[2]string{r.File, r.Function}]; cur == nil || cur.status != schema.SourceOK {
			c.add(r)
		}
	}
	if err := c.readCalls(b, mem); err != nil {
		return nil, err
	}
	if len(c.callFiles) == 0 {
		c.addCalls(extra.calls)
	}
	return c, nil
}

// add keeps one function's row.
func (c *sourceCode) add(r schema.SourceCode) {
	f := &funcSource{start: int(r.StartLine), end: int(r.EndLine), sha: r.FileSHA256, status: r.Status, detail: r.Detail}
	if f.status == schema.SourceOK {
		f.lines = strings.Split(r.Text, "\n")
	}
	c.funcs[[2]string{r.File, r.Function}] = f
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

// goBefore reports whether a Go version ("go1.22.5", "devel go1.24-…")
// is older than go1.minor; false when it cannot tell.
func goBefore(version string, minor int) bool {
	i := strings.Index(version, "go1.")
	if i < 0 {
		return false
	}
	n, rest := 0, version[i+len("go1."):]
	for j := 0; j < len(rest) && rest[j] >= '0' && rest[j] <= '9'; j++ {
		n = 10*n + int(rest[j]-'0')
	}
	return n > 0 && n < minor
}

// parsedFunc is a kept declaration read as Go: its syntax tree and the
// offset that turns the tree's line numbers into the file's.
type parsedFunc struct {
	fset *token.FileSet
	decl *ast.FuncDecl
	// shift is added to a line of the parsed text to give the line of the
	// file ("package p" is prepended as line 1, the declaration starts on
	// line 2 of the text and on line start of the file).
	shift int
	err   error // the text does not parse as a function declaration
	// asyncTimers is the program's timer semantics (see resolver); res
	// follows values through the declaration, built on first use.
	asyncTimers bool
	res         *resolver
}

// waitCase is one way a wait statement can end.
type waitCase struct {
	kind string
	expr string // the channel expression, as Go prints it
	line int
}

// waitStmt is the statement a frame is at, read as Go from the kept
// source: a select and its cases, a receive, a range over a channel, a
// send, or (for allocations) the simple statement at the line. kind ""
// means none was found, and why says why (source absent, changed, does
// not parse, no such statement at the line).
type waitStmt struct {
	kind   string
	line   int
	cases  []waitCase
	inLoop bool // a for loop of the same function encloses it
	// endless is set for a range over a Ticker's C (which the time
	// package never closes) whose body has no way out: the goroutine
	// can never end.
	endless bool
	calls   []string // package functions it calls (time.AfterFunc), sorted
	// releasedAt is, for a send, the line of the receive that gives a
	// channel semaphore's slot back (see releaseAfter); 0 for none.
	releasedAt int
	text       string // the statement as go/printer prints it (comments left out)
	why        string
}

// stmtKey is a frame's line and the wait kind looked for there.
type stmtKey struct {
	file, function string
	line           int
	kind           string
}

// sourceCall is one call site of the program's own source into another
// package (a source_calls row).
type sourceCall struct {
	file, function string
	line           int
	callee, kind   string
}

// readCalls reads the source_calls table (none: no call is known).
func (c *sourceCode) readCalls(b *bundle.Bundle, mem memory.Allocator) error {
	c.callFiles = map[string]int{}
	return tables.ReadSourceCalls(b, mem, c.addCall)
}

// addCalls keeps the rows of a call index.
func (c *sourceCode) addCalls(rows []schema.SourceCall) {
	for _, r := range rows {
		c.addCall(r)
	}
}

// addCall keeps one row of a call index.
func (c *sourceCode) addCall(r schema.SourceCall) {
	switch r.Kind {
	case schema.CallKindFile:
		c.callFiles[r.Callee]++
	case schema.CallKindTruncated:
		c.callsPartial = true
	default:
		c.calls = append(c.calls, sourceCall{file: r.File, function: r.Function, line: int(r.Line), callee: r.Callee, kind: r.Kind})
	}
}

// resolver follows values through one kept declaration by name (x, x.f):
// what each name is assigned, its declared type, the methods called on
// it, the channels signal.Notify is given, and the values of composite
// literals' fields. Names are not scoped: two variables of one name in
// one declaration share what is known of them.
type resolver struct {
	assigned map[string][]ast.Expr
	types    map[string][]ast.Expr
	methods  map[string]map[string]bool
	notified map[string]bool
	fields   map[string][]ast.Expr // field name → values given to it in composite literals
	// asyncTimers: the program was built before Go 1.23, whose timer
	// channels still deliver a value after Stop.
	asyncTimers bool
}
