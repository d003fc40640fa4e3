package analysis

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// TestGoRootWithoutVersion checks that, with the target's Go version
// unknown (dumps alone), this machine's Go root is read for a file only
// when the bundle's frames in it lie inside declarations of their
// functions there.
func TestGoRootWithoutVersion(t *testing.T) {
	file := filepath.Join(build.Default.GOROOT, "src", "database", "sql", "sql.go")
	start, end := declLines(t, file, "OpenDB")
	for _, c := range []struct {
		name   string
		frames []Frame
		want   bool
	}{
		{"inside", []Frame{{Function: "database/sql.OpenDB", File: file, Line: (start + end) / 2}}, true},
		{"a closure inside", []Frame{{Function: "database/sql.OpenDB.func1", File: file, Line: end}}, true},
		{"outside", []Frame{{Function: "database/sql.OpenDB", File: file, Line: end + 1}}, false},
		{"one of two outside", []Frame{{Function: "database/sql.OpenDB", File: file, Line: start}, {Function: "database/sql.Open", File: file, Line: start}}, false},
		{"no frame", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ls := newLibSource("")
			ls.frames = map[string][]Frame{file: c.frames}
			if got := ls.trusted(file); got != c.want {
				t.Errorf("trusted: %v, want %v", got, c.want)
			}
		})
	}
}

// declLines is the line range of a function's declaration in a file.
func declLines(t *testing.T, file, name string) (int, int) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == name {
			return fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
		}
	}
	t.Fatalf("no %s in %s", name, file)
	return 0, 0
}
