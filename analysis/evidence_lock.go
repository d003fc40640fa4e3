package analysis

import (
	"fmt"
	"go/ast"
	"go/token"
	"strings"
)

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
