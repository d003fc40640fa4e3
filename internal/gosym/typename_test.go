package gosym

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// TestBaseTypeName checks the receiver's type name read from each form
// a method's receiver takes, and the forms that name no type of the
// package.
func TestBaseTypeName(t *testing.T) {
	for recv, want := range map[string]string{
		"T": "T", "*T": "T", "(T)": "T", "(*T)": "T", "*(T)": "T", "((*T))": "T",
		"T[K]": "T", "*T[K]": "T", "T[K, V]": "T", "*T[K, V]": "T", "(*T[K, V])": "T",
		"pkg.T": "", "[]T": "", "func()": "", "struct{}": "", "map[K]V": "",
	} {
		src := "package p\nfunc (r " + recv + ") M() {}\n"
		f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s: %v", recv, err)
		}
		fd := f.Decls[0].(*ast.FuncDecl)
		if got := BaseTypeName(fd.Recv.List[0].Type); got != want {
			t.Errorf("BaseTypeName(%s) = %q, want %q", recv, got, want)
		}
	}
}
