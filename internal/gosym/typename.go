package gosym

import "go/ast"

// BaseTypeName is the name of the type a type expression is built on,
// as a method's symbol spells its receiver: T for T, *T, (*T), T[K] and
// *T[K, V]; "" for other forms (pkg.T, []T, a func or struct type).
func BaseTypeName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}
