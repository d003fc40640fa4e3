package analysis

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoRootFor checks which Go root the program reading trusts for the
// frames of a dump: the one the frames name when it is here and of the
// target's version; else a toolchain of that version in the module
// cache; with the version unknown, a root whose files hold the frames'
// lines (a dump alone); none otherwise.
func TestGoRootFor(t *testing.T) {
	local := build.Default.GOROOT
	line := declLine(t, filepath.Join(local, "src", "sync", "waitgroup.go"), "WaitGroup.Wait")
	frames := []Frame{{Function: "sync.(*WaitGroup).Wait", File: local + "/src/sync/waitgroup.go", Line: line}}
	if got := goRootFor(frames, ""); got != [2]string{local, local} {
		t.Errorf("a dump of this Go root, version unknown: %v", got)
	}
	if got := goRootFor(frames, rootVersion(local)); got != [2]string{local, local} {
		t.Errorf("a dump of this Go root, its version given: %v", got)
	}
	// every dump ends in runtime.goexit, written in assembly: no Go
	// declaration holds it, and it must not make the root untrusted
	withAsm := append(frames[:1:1], Frame{Function: "runtime.goexit", File: local + "/src/runtime/asm_amd64.s", Line: 1700})
	if got := goRootFor(withAsm, ""); got != [2]string{local, local} {
		t.Errorf("a dump with an assembly frame, version unknown: %v", got)
	}
	moved := []Frame{{Function: frames[0].Function, File: "/elsewhere/go/src/sync/waitgroup.go", Line: line}}
	if got := goRootFor(moved, ""); got != [2]string{"/elsewhere/go", local} {
		t.Errorf("another machine's root at another path, version unknown: %v", got)
	}
	wrongLine := []Frame{{Function: frames[0].Function, File: frames[0].File, Line: 1}}
	if got := goRootFor(wrongLine, ""); got != [2]string{} {
		t.Errorf("frames whose lines this root does not hold were trusted: %v", got)
	}
	const v = "go1.27.3"
	tc := cachedToolchain(v)
	if tc == "" {
		t.Skipf("the module cache holds no %s toolchain (make deps fetches it)", v)
	}
	if got := goRootFor(moved, v); got != [2]string{"/elsewhere/go", tc} {
		t.Errorf("a %s target's frames: %v, want the cached toolchain %s", v, got, tc)
	}
	if got := versionInPath(tc); got != v {
		t.Errorf("versionInPath(%s) = %q", tc, got)
	}
}

// declLine is the first line of a method's declaration ("Type.Method")
// in a file.
func declLine(t *testing.T, path, key string) int {
	t.Helper()
	recv, name, _ := strings.Cut(key, ".")
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Skip(err)
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || fd.Name.Name != name {
			continue
		}
		typ := fd.Recv.List[0].Type
		if st, ok := typ.(*ast.StarExpr); ok {
			typ = st.X
		}
		if id, ok := typ.(*ast.Ident); ok && id.Name == recv {
			return fset.Position(fd.Pos()).Line
		}
	}
	t.Fatalf("%s declares no %s", path, key)
	return 0
}
