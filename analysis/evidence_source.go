package analysis

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"

	"github.com/leakscope/leakscope/ingest/schema"
)

// errNoSource is the parse result of a function the bundle holds no text
// of.
var errNoSource = errors.New("no source kept")

// parsed returns the declaration's syntax tree, parsing it once. A text
// that does not parse gives a parsedFunc whose err says why; nothing
// panics on any text.
func (fs *funcSource) parsed() *parsedFunc {
	if fs.ast != nil {
		return fs.ast
	}
	p := &parsedFunc{fset: token.NewFileSet(), shift: fs.start - 2}
	fs.ast = p
	if fs.status != schema.SourceOK || len(fs.lines) == 0 {
		p.err = errNoSource
		return p
	}
	src := "package p\n" + strings.Join(fs.lines, "\n")
	f, err := parser.ParseFile(p.fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		p.err = fmt.Errorf("the kept text does not parse: %w", err)
		return p
	}
	if len(f.Decls) != 1 {
		p.err = fmt.Errorf("the kept text holds %d declarations, not one function", len(f.Decls))
		return p
	}
	d, ok := f.Decls[0].(*ast.FuncDecl)
	if !ok || d.Body == nil {
		p.err = errors.New("the kept text is not a function with a body")
		return p
	}
	p.decl = d
	return p
}

// line is the file's line of a position in the tree.
func (p *parsedFunc) line(pos token.Pos) int {
	return p.fset.Position(pos).Line + p.shift
}

// funcAt returns the parsed declaration holding frame f's line, or why
// there is none: the bundle holds no source of the function, the line
// lies outside it, or the text does not parse.
func (c *sourceCode) funcAt(f Frame) (*parsedFunc, string) {
	if c == nil {
		return nil, "source absent"
	}
	fs := c.funcs[[2]string{f.File, f.Function}]
	switch {
	case fs == nil:
		return nil, "source absent"
	case fs.status == schema.SourceUnavailable:
		return nil, "source unavailable (" + fs.detail + ")"
	case fs.status != schema.SourceOK:
		return nil, "source changed since the build (" + fs.detail + ")"
	case f.Line < fs.start || f.Line > fs.end:
		return nil, "source changed since the build"
	}
	p := fs.parsed()
	if p.err != nil {
		return nil, "source does not parse"
	}
	p.asyncTimers = c.asyncTimers
	return p, ""
}

// unparen removes parentheses around an expression.
func unparen(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// exprName prints a name-like expression (x, x.y, x.y.z, (*x).y) as Go
// writes it, "" for anything else (calls, indexes): the key by which
// values are followed through a declaration.
func exprName(e ast.Expr) string {
	switch x := unparen(e).(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		if l := exprName(x.X); l != "" {
			return l + "." + x.Sel.Name
		}
	case *ast.StarExpr:
		return exprName(x.X)
	}
	return ""
}

// pkgCall returns "pkg.Func" for a call of a package-qualified function
// (time.After(d)), "" otherwise.
func pkgCall(e ast.Expr) string {
	call, ok := unparen(e).(*ast.CallExpr)
	if !ok {
		return ""
	}
	sel, ok := unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	if id, ok := sel.X.(*ast.Ident); ok {
		return id.Name + "." + sel.Sel.Name
	}
	return ""
}

// methodCall returns the receiver's name and the method of a call x.M()
// whose receiver is name-like, "" otherwise.
func methodCall(e ast.Expr) (recv, method string) {
	call, ok := unparen(e).(*ast.CallExpr)
	if !ok {
		return "", ""
	}
	sel, ok := unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return "", ""
	}
	return exprName(sel.X), sel.Sel.Name
}
