package analysis

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/printer"
	"go/token"
	"sort"
	"strings"
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
		w.releasedAt = releaseAfter(p, n, stack)
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
// "statement"), "in-loop", "semaphore-acquire" (factSemaphore), one
// "CASE-case" per kind of case it has
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
	if w.releasedAt > 0 {
		out = append(out, factSemaphore)
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

// waitAt reads the statement a parked goroutine waits at (its location
// frame's line) from the kept source.
func (c *sourceCode) waitAt(frames []Frame, kind string) *waitStmt {
	loc, _ := locationFrame(frames)
	return c.stmtAt(loc, kind)
}

// timerWait says whether a timer can end a select or receive: yes when
// one of the statement's own cases receives from time.After, time.Tick,
// or the C of a Timer or Ticker (not one just stopped); a timer
// elsewhere in the function does not count. Maybe when the kept source
// cannot say: the statement is not known (source absent, changed, does
// not parse) or a case receives the C of a value whose type the
// declaration does not show. Maybe counts as a timer wait, so a missing
// source never makes a goroutine stuck that its source would show live
// (a retry loop on time.After); it only leaves undecided what the
// source would have judged. The standard library's own waits, whose
// source is not kept, are taken as they are: no.
func timerWait(w *waitStmt, frames []Frame) tri {
	t := w.timer()
	if t == triMaybe && w.kind == "" {
		if loc, _ := locationFrame(frames); isStd(loc) {
			return triNo
		}
	}
	return t
}

// signalWait reports a receive or select on a channel signal.Notify
// feeds in the same declaration; without the statement (source absent or
// changed), main.main while the process has a signal loop (the usual
// run-until-signalled idiom).
func signalWait(w *waitStmt, frames []Frame, signals bool) bool {
	if w.kind != "" {
		return w.has(caseSignal)
	}
	loc, _ := locationFrame(frames)
	return signals && loc.Function == "main.main"
}

// heldBySelf reads, from the kept source, whether the goroutine waiting
// for a lock at frame f already holds that lock itself: the call at the
// frame's line is X.Lock() or X.RLock(), and a statement that certainly
// ran before it in the same function (an earlier statement of a block
// that encloses the call) is X.Lock() or X.RLock() on the same
// expression X, not undone by X.Unlock() or X.RUnlock() in between
// (deferred releases run only at return). Then only this goroutine could
// release what it waits for: it is stuck on itself. A read lock taken
// twice deadlocks only behind a waiting writer, so RLock after RLock does
// not count. It says what it read ("c.mu.RLock() at line 14, still held
// at c.mu.Lock() at line 19"), or "" when the source does not show it.
func (c *sourceCode) heldBySelf(f Frame) string {
	p, _ := c.funcAt(f)
	if p == nil {
		return ""
	}
	call, path := lockCallAt(p, f.Line)
	if call == nil {
		return ""
	}
	x, method := lockCall(p, call)
	h, ok := locksHeld(p, path)[x]
	if !ok || h.method == "RLock" && method == "RLock" {
		return ""
	}
	return fmt.Sprintf("%s.%s() at line %d, still held at %s.%s() at line %d", x, h.method, h.line, x, method, f.Line)
}

// heldLock is a lock a function holds at a statement: the method that
// took it (Lock or RLock) and its line.
type heldLock struct {
	method string
	line   int
}

// locksHeld lists, by the expression locked as Go prints it, the locks
// held at the last node of path: X.Lock() or X.RLock() in an earlier
// statement of a block that encloses it, not undone by X.Unlock() or
// X.RUnlock() in between (deferred releases run only at return).
func locksHeld(p *parsedFunc, path []ast.Node) map[string]heldLock {
	held := map[string]heldLock{}
	for i := 0; i < len(path)-1; i++ {
		for _, st := range blockStmts(path[i]) {
			if st == path[i+1] {
				break
			}
			e, ok := st.(*ast.ExprStmt)
			if !ok {
				continue
			}
			ce, ok := e.X.(*ast.CallExpr)
			if !ok {
				continue
			}
			switch y, m := lockCall(p, ce); m {
			case "Lock", "RLock":
				held[y] = heldLock{m, p.line(ce.Pos())}
			case "Unlock", "RUnlock":
				delete(held, y)
			}
		}
	}
	return held
}

// lockCallAt finds the X.Lock() or X.RLock() call at line, with the
// nodes from the declaration down to it; nil when there is none. It
// does not look into function literals: they may run on another
// goroutine.
func lockCallAt(p *parsedFunc, line int) (*ast.CallExpr, []ast.Node) {
	return callAtLine(p, line, func(ce *ast.CallExpr) bool {
		_, m := lockCall(p, ce)
		return m == "Lock" || m == "RLock"
	})
}

// callAtLine finds the first call at line, outside function literals,
// that want accepts, with the nodes from the declaration down to it;
// nil when there is none.
func callAtLine(p *parsedFunc, line int, want func(*ast.CallExpr) bool) (*ast.CallExpr, []ast.Node) {
	var found *ast.CallExpr
	var path, stack []ast.Node
	ast.Inspect(p.decl, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if _, ok := n.(*ast.FuncLit); ok || found != nil {
			return false
		}
		stack = append(stack, n)
		if ce, ok := n.(*ast.CallExpr); ok && p.line(ce.Pos()) == line && want(ce) {
			found, path = ce, append([]ast.Node(nil), stack...)
		}
		return true
	})
	return found, path
}

// lockCall returns, for a call X.M() with no arguments, X as Go prints
// it and M; "" when the call is not of that form.
func lockCall(p *parsedFunc, ce *ast.CallExpr) (x, method string) {
	sel, ok := ce.Fun.(*ast.SelectorExpr)
	if !ok || len(ce.Args) != 0 {
		return "", ""
	}
	switch sel.Sel.Name {
	case "Lock", "RLock", "Unlock", "RUnlock":
		return printNode(p.fset, sel.X), sel.Sel.Name
	}
	return "", ""
}

// blockStmts returns the statements of a node that holds a list of them
// (a block, a case or select clause), nil for any other node.
func blockStmts(n ast.Node) []ast.Stmt {
	switch b := n.(type) {
	case *ast.BlockStmt:
		return b.List
	case *ast.CaseClause:
		return b.Body
	case *ast.CommClause:
		return b.Body
	}
	return nil
}

// mayLeave reports whether a loop body has a statement that can end the
// loop or the goroutine: a return, any break or goto, or a call of
// panic, runtime.Goexit, os.Exit or a Fatal or Panic function. It does
// not look into function literals.
func mayLeave(body *ast.BlockStmt) bool {
	leaves := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			leaves = true
		case *ast.BranchStmt:
			leaves = leaves || n.Tok == token.BREAK || n.Tok == token.GOTO
		case *ast.CallExpr:
			leaves = leaves || endsGoroutine(n.Fun)
		}
		return !leaves
	})
	return leaves
}

// endsGoroutine reports a callee that never returns to its caller.
func endsGoroutine(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name == "panic"
	case *ast.SelectorExpr:
		switch name := f.Sel.Name; {
		case name == "Goexit", name == "Exit":
			return true
		case strings.HasPrefix(name, "Fatal"), strings.HasPrefix(name, "Panic"):
			return true
		}
	}
	return false
}
