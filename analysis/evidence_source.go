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

// allocObject names what the statement at frame f's line allocates, read
// as Go from the kept source: a map written (m[k] = v), a slice grown by
// append, a map, channel or slice made with make, a composite literal
// taken by address or new(T), a closure; "" when the source is not kept
// or the statement shows none of them.
func (c *sourceCode) allocObject(f Frame) string {
	_, node := c.allocStmt(f)
	if node == nil {
		return ""
	}
	var mapWrite, appends, makeMap, makeChan, makeSlice, newObj, closure bool
	if as, ok := node.(*ast.AssignStmt); ok && as.Tok == token.ASSIGN {
		for _, l := range as.Lhs {
			if _, ok := unparen(l).(*ast.IndexExpr); ok {
				mapWrite = true
			}
		}
	}
	ast.Inspect(node, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			switch builtin(n) {
			case "append":
				appends = true
			case "new":
				newObj = true
			case "make":
				if len(n.Args) > 0 {
					switch unparen(n.Args[0]).(type) {
					case *ast.MapType:
						makeMap = true
					case *ast.ChanType:
						makeChan = true
					case *ast.ArrayType:
						makeSlice = true
					}
				}
			}
		case *ast.UnaryExpr:
			if _, ok := unparen(n.X).(*ast.CompositeLit); ok && n.Op == token.AND {
				newObj = true
			}
		case *ast.FuncLit:
			closure = true
		}
		return true
	})
	switch {
	case mapWrite:
		return "map"
	case appends:
		return "slice grown by append"
	case makeMap:
		return "maps made with make"
	case makeChan:
		return "channel buffers"
	case makeSlice:
		return "slices made with make"
	case newObj:
		return "new objects"
	case closure:
		return "closures"
	}
	return ""
}

// allocStmt returns the simple statement at frame f's line.
func (c *sourceCode) allocStmt(f Frame) (*parsedFunc, ast.Node) {
	p, _ := c.funcAt(f)
	if p == nil {
		return nil, nil
	}
	n, _ := findStmt(p, f.Line, "")
	return p, n
}

// builtin names the builtin a call calls (make, new, append), "" for
// anything else.
func builtin(call *ast.CallExpr) string {
	if id, ok := unparen(call.Fun).(*ast.Ident); ok {
		switch id.Name {
		case "make", "new", "append":
			return id.Name
		}
	}
	return ""
}

// holder finds, in the kept source of frame f's function, where the value
// allocated at f's line goes: the statement there assigns it to a
// variable (v := make(…), &T{…}, new(…), append(…)), and a later
// statement writes that variable into a map (m[k] = v) or appends it to
// a slice (s = append(s, v)). It returns that line and the container's
// kind ("map", "slice grown by append"), or 0.
func (c *sourceCode) holder(f Frame) (int, string) {
	p, node := c.allocStmt(f)
	as, ok := node.(*ast.AssignStmt)
	if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
		return 0, ""
	}
	id, ok := unparen(as.Lhs[0]).(*ast.Ident)
	if !ok || !allocates(as.Rhs[0]) {
		return 0, ""
	}
	line, kind := 0, ""
	ast.Inspect(p.decl, func(n ast.Node) bool {
		if kind != "" || n == nil || n.Pos() <= as.End() {
			return kind == ""
		}
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				if _, ok := unparen(l).(*ast.IndexExpr); ok && n.Tok == token.ASSIGN && i < len(n.Rhs) && isIdent(n.Rhs[i], id.Name) {
					line, kind = p.line(n.Pos()), "map"
				}
			}
		case *ast.CallExpr:
			if builtin(n) == "append" {
				for _, a := range n.Args[min(1, len(n.Args)):] {
					if isIdent(a, id.Name) {
						line, kind = p.line(n.Pos()), "slice grown by append"
					}
				}
			}
		}
		return kind == ""
	})
	return line, kind
}

// allocates reports a make, new or append call, or an address taken.
func allocates(e ast.Expr) bool {
	switch x := unparen(e).(type) {
	case *ast.CallExpr:
		return builtin(x) != ""
	case *ast.UnaryExpr:
		return x.Op == token.AND
	}
	return false
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := unparen(e).(*ast.Ident)
	return ok && id.Name == name
}
