package analysis

import (
	"bytes"
	"go/ast"
	"go/printer"
	"go/token"
	"sort"
)

// Kinds of a wait statement's cases ([waitCase.kind]), read from the
// kept source with go/ast.
const (
	caseTimer      = "timer"         // time.After(d), the C of a time.Timer
	caseTicker     = "ticker"        // time.Tick(d), the C of a time.Ticker
	caseMaybeTimer = "maybe-timer"   // the C field of a value whose type the declaration does not show
	caseStopped    = "stopped-timer" // a timer's C right after its Stop: delivers nothing until a Reset
	caseDone       = "done"          // x.Done(): a context's or a done channel
	caseSignal     = "signal"        // a channel that signal.Notify feeds in the declaration
	caseDefault    = "default"
	caseSend       = "send"
	caseChan       = "channel" // any other channel
)

// Wait statement kinds ([waitStmt.kind]).
const (
	stmtSelect  = "select"
	stmtReceive = "receive"
	stmtRange   = "range"
	stmtSend    = "send"
	stmtOther   = "statement" // the simple statement at a line (an allocation)
)

// stmtAt finds the statement frame f is at, for a goroutine waiting in
// state kind (waitKind's "select", "chan receive", "chan send"; "" for
// an allocation's line).
func (c *sourceCode) stmtAt(f Frame, kind string) *waitStmt {
	if c == nil {
		return &waitStmt{why: "source absent"}
	}
	k := stmtKey{f.File, f.Function, f.Line, kind}
	if w, ok := c.stmts[k]; ok {
		return w
	}
	w := c.findWait(f, kind)
	if c.stmts == nil {
		c.stmts = map[stmtKey]*waitStmt{}
	}
	c.stmts[k] = w
	return w
}

// findWait is stmtAt without the memo.
func (c *sourceCode) findWait(f Frame, kind string) *waitStmt {
	p, why := c.funcAt(f)
	if p == nil {
		return &waitStmt{why: why}
	}
	node, stack := findStmt(p, f.Line, kind)
	if node == nil {
		return &waitStmt{why: "no " + stmtWanted(kind) + " at the frame's line in the kept source: source changed since the build"}
	}
	w := &waitStmt{line: f.Line, text: printNode(p.fset, node)}
	r := resolverOf(p)
	switch n := node.(type) {
	case *ast.SelectStmt:
		w.kind = stmtSelect
		for _, cl := range n.Body.List {
			cc, ok := cl.(*ast.CommClause)
			if !ok {
				continue
			}
			w.cases = append(w.cases, r.commCase(p, cc))
		}
	case *ast.UnaryExpr:
		w.kind = stmtReceive
		w.cases = []waitCase{r.recvCase(p, n.X, stack)}
	case *ast.RangeStmt:
		w.kind = stmtRange
		w.cases = []waitCase{r.recvCase(p, n.X, stack)}
		w.endless = w.cases[0].kind == caseTicker && !mayLeave(n.Body)
	case *ast.SendStmt:
		w.kind = stmtSend
		w.cases = []waitCase{{kind: caseSend, expr: printNode(p.fset, n.Chan), line: p.line(n.Pos())}}
	default:
		w.kind = stmtOther
	}
	if w.has(caseDefault) && kind != "" {
		// A select with a default case never parks: the kept text is not
		// what was built.
		return &waitStmt{why: "the select at the frame's line in the kept source has a default case: source changed since the build"}
	}
	w.inLoop = inLoop(node, stack)
	w.calls = callsIn(node)
	return w
}

// facts names what the statement is and how it can end, for the rules'
// statement conditions: its kind ("select", "receive", "range", "send",
// "statement"), "in-loop", one "CASE-case" per kind of case it has
// ("timer-case", "ticker-case", "stopped-timer-case", "done-case",
// "signal-case", "maybe-timer-case", "channel-case", "send-case") and
// "calls:PKG.FUNC" for each package function it calls. None when the
// statement is not known.
func (w *waitStmt) facts() []string {
	if w == nil || w.kind == "" {
		return nil
	}
	out := []string{w.kind}
	if w.inLoop {
		out = append(out, "in-loop")
	}
	seen := map[string]bool{}
	for _, c := range w.cases {
		if !seen[c.kind] {
			seen[c.kind] = true
			out = append(out, c.kind+"-case")
		}
	}
	for _, c := range w.calls {
		out = append(out, "calls:"+c)
	}
	return out
}

func stmtWanted(kind string) string {
	switch kind {
	case "select":
		return "select"
	case "chan receive":
		return "receive"
	case "chan send":
		return "send"
	}
	return "statement"
}

// findStmt returns the node at line that a goroutine in wait kind blocks
// in, with the nodes enclosing it (outermost first). A select frame is
// at its select keyword; a receive at its arrow (or the range over the
// channel); a send at the send. For an allocation (kind "") it is the
// innermost simple statement spanning the line.
func findStmt(p *parsedFunc, line int, kind string) (ast.Node, []ast.Node) {
	var best ast.Node
	var bestStack, stack []ast.Node
	rank := func(n ast.Node) int {
		switch n := n.(type) {
		case *ast.SelectStmt:
			if p.line(n.Pos()) == line && (kind == "select" || kind == "chan receive" && len(n.Body.List) == 1) {
				return 4
			}
		case *ast.UnaryExpr:
			if n.Op == token.ARROW && p.line(n.OpPos) == line && kind == "chan receive" {
				return 3
			}
		case *ast.RangeStmt:
			if p.line(n.For) == line && kind == "chan receive" {
				return 2
			}
		case *ast.SendStmt:
			if p.line(n.Arrow) == line && kind == "chan send" {
				return 3
			}
		case *ast.AssignStmt, *ast.ExprStmt, *ast.ReturnStmt, *ast.DeclStmt, *ast.GoStmt, *ast.DeferStmt, *ast.IncDecStmt:
			if kind == "" && p.line(n.Pos()) <= line && line <= p.line(n.End()) {
				return 1
			}
		}
		return 0
	}
	bestRank := 0
	ast.Inspect(p.decl, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		// Innermost wins among equals: a later (deeper) node of the same
		// rank replaces an outer one.
		if r := rank(n); r > 0 && r >= bestRank {
			best, bestRank = n, r
			bestStack = append([]ast.Node(nil), stack...)
		}
		stack = append(stack, n)
		return true
	})
	return best, bestStack
}

// inLoop reports whether a for or range statement of the same function
// encloses node (a range statement is its own loop).
func inLoop(node ast.Node, stack []ast.Node) bool {
	if _, ok := node.(*ast.RangeStmt); ok {
		return true
	}
	for i := len(stack) - 1; i >= 0; i-- {
		switch stack[i].(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			return true
		case *ast.FuncLit, *ast.FuncDecl:
			return false
		}
	}
	return false
}

// callsIn lists the package functions called inside node, sorted.
func callsIn(node ast.Node) []string {
	seen := map[string]bool{}
	ast.Inspect(node, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok {
			if c := pkgCall(e); c != "" {
				seen[c] = true
			}
		}
		return true
	})
	out := make([]string, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// printNode prints a node as Go (gofmt layout, comments left out).
func printNode(fset *token.FileSet, n ast.Node) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, n); err != nil {
		return ""
	}
	return b.String()
}

// timer says whether a timer can end the wait: yes when one of the
// statement's own cases receives from a timer or ticker; maybe when the
// statement is not known (source absent or changed) or a case receives
// the C of a value whose type the declaration does not show; no
// otherwise.
func (w *waitStmt) timer() tri {
	if w.kind == "" {
		return triMaybe
	}
	out := triNo
	for _, c := range w.cases {
		switch c.kind {
		case caseTimer, caseTicker:
			return triYes
		case caseMaybeTimer:
			out = triMaybe
		}
	}
	return out
}

// has reports whether one of the statement's cases is of kind k.
func (w *waitStmt) has(k string) bool {
	for _, c := range w.cases {
		if c.kind == k {
			return true
		}
	}
	return false
}

// tri is a three-valued fact: known to hold, known not to, or not known.
type tri int8

const (
	triNo tri = iota
	triMaybe
	triYes
)
