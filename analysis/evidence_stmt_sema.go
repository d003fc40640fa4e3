package analysis

import (
	"go/ast"
	"go/token"
)

// factSemaphore is the statement fact of a send that takes a slot of a
// channel semaphore: the same function receives from that channel later
// and drops the value, which gives the slot back.
const factSemaphore = "semaphore-acquire"

// releaseAfter returns the line of the first receive, after send in the
// function that holds it (deferred closures included), from the channel
// send sends on whose value is dropped — `<-sem` as a statement — and 0
// when there is none. A receive whose value is used is an answer, not a
// release: `ch <- req; resp := <-ch` is no semaphore.
func releaseAfter(p *parsedFunc, send *ast.SendStmt, stack []ast.Node) int {
	body := enclosingBody(stack)
	if body == nil {
		return 0
	}
	line := 0
	ast.Inspect(body, func(n ast.Node) bool {
		if line != 0 || n == nil {
			return false
		}
		st, ok := n.(*ast.ExprStmt)
		if !ok || st.Pos() < send.End() {
			return true
		}
		if u, ok := ast.Unparen(st.X).(*ast.UnaryExpr); ok && u.Op == token.ARROW && sameOperand(u.X, send.Chan) {
			line = p.line(u.OpPos)
		}
		return true
	})
	return line
}

// enclosingBody is the body of the innermost function literal or
// declaration among the nodes enclosing a statement (outermost first).
func enclosingBody(stack []ast.Node) *ast.BlockStmt {
	for i := len(stack) - 1; i >= 0; i-- {
		switch f := stack[i].(type) {
		case *ast.FuncLit:
			return f.Body
		case *ast.FuncDecl:
			return f.Body
		}
	}
	return nil
}

// sameOperand reports two expressions naming the same variable or field
// path (x, x.f, (*x).f), by name: the declaration's names are not
// scoped (see resolver).
func sameOperand(a, b ast.Expr) bool {
	a, b = ast.Unparen(a), ast.Unparen(b)
	switch a := a.(type) {
	case *ast.Ident:
		b, ok := b.(*ast.Ident)
		return ok && a.Name == b.Name && a.Name != "_"
	case *ast.SelectorExpr:
		b, ok := b.(*ast.SelectorExpr)
		return ok && a.Sel.Name == b.Sel.Name && sameOperand(a.X, b.X)
	case *ast.StarExpr:
		b, ok := b.(*ast.StarExpr)
		return ok && sameOperand(a.X, b.X)
	}
	return false
}
