package analysis

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

// outerConstructor reads the user's call at the origin's line, from the
// bundle's snapshot of its function, for a call of the same package
// that takes the library function's result as an argument:
// `sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))` leaks the
// provider NewTracerProvider makes, not the option WithBatcher returns.
// The package is the same when both calls name it by the same
// identifier. Zero when there is no such call or no snapshot.
func (rf *releaseFinder) outerConstructor(o *Origin, called Frame) typeRef {
	pkg, recv, _, name := splitFunc(called.Function)
	if rf.user == nil || recv != "" || name == "" {
		return typeRef{}
	}
	fs := rf.user.funcs[[2]string{o.File, o.Function}]
	if fs == nil || fs.lines == nil || o.Line < fs.start {
		return typeRef{}
	}
	const header = "package p\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", header+strings.Join(fs.lines, "\n"), parser.SkipObjectResolution)
	if err != nil {
		return typeRef{}
	}
	line := o.Line - fs.start + 2 // the header is line 1
	var outer string
	var stack []*ast.CallExpr
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		call, _ := n.(*ast.CallExpr)
		stack = append(stack, call)
		if call == nil || fset.Position(call.Lparen).Line != line {
			return true
		}
		x, sel := selectorCall(call)
		if sel != name || x == "" {
			return true
		}
		for _, up := range stack[:len(stack)-1] {
			if up == nil {
				continue
			}
			if ux, us := selectorCall(up); ux == x && us != "" {
				outer = us
				break // the outermost: stack runs from the root down
			}
		}
		return true
	})
	if outer == "" {
		return typeRef{}
	}
	return typeRef{pkg: pkg, name: outer}
}

// selectorCall names the qualifier and selector of a call `x.Sel(…)`.
func selectorCall(c *ast.CallExpr) (string, string) {
	s, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", ""
	}
	id, ok := s.X.(*ast.Ident)
	if !ok {
		return "", ""
	}
	return id.Name, s.Sel.Name
}
