package gosrc

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"maps"
	"slices"
	"strings"
	"testing"
)

// FuzzProgram reads a program's file from a bundle as leakscope reads
// any outside input: whatever its text, reading it and asking every
// question the wait-for stage asks (the wait at each line of each
// function, who can release it, what each goroutine can still do) must
// not panic, and two readings of one text must answer alike (the same
// input gives the same verdict).
func FuzzProgram(f *testing.F) {
	for _, src := range []string{feederSrc, freshSrc, "package main\n", "package main\nfunc main() { select {} }\n"} {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 1<<14 {
			return
		}
		a, b := answers(t, src), answers(t, src)
		if !slices.Equal(a, b) {
			t.Fatalf("two readings of one text answer differently:\n%s\n---\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
		}
	})
}

// answers reads src as package main (no library bodies: the standard
// library's declarations only) and writes what it answers, question by
// question.
func answers(t *testing.T, src string) []string {
	const file = "/src/app/main.go"
	p := Load(Config{Files: []File{{Path: file, Package: "main", Text: []byte(src)}}, Libraries: &Libraries{}})
	var out []string
	for _, fr := range funcLines(src, file) {
		for _, kind := range slices.Sorted(maps.Keys(waitOps)) {
			w, why := p.WaitAt([]Frame{fr}, kind)
			if w == nil {
				out = append(out, fmt.Sprintf("%v %s: %s", fr, kind, why))
				continue
			}
			for _, c := range w.Cases {
				keys := p.Releasers(c)
				fut := p.Track(keys).Future([]Frame{fr}, -1)
				out = append(out, fmt.Sprintf("%v %s: %s line %d op %d keys %d caps %d", fr, kind, c.Expr, c.Line, c.Op, len(keys), len(fut.Caps)))
			}
		}
	}
	return out
}

// funcLines is a frame at every line of every function declared in src
// (none when src does not parse).
func funcLines(src, file string) []Frame {
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	var out []Frame
	for _, d := range af.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || fd.Recv != nil {
			continue
		}
		for l := fset.Position(fd.Body.Pos()).Line; l <= fset.Position(fd.Body.End()).Line && len(out) < 200; l++ {
			out = append(out, Frame{Function: "main." + fd.Name.Name, File: file, Line: l})
		}
	}
	return out
}

// TestImportOutsideRoots: an import path that climbs out of the Go root
// or the module cache names no directory.
func TestImportOutsideRoots(t *testing.T) {
	l := &Libraries{GoRoot: build.Default.GOROOT, ModCache: "/root/go/pkg/mod", Modules: map[string]string{"example.com/m": "v1.0.0"}}
	for _, ip := range []string{"a/../../../etc", "example.com/m/../../../../etc", "/etc", "sync/./x"} {
		if d := l.dirOf(ip, ""); d != "" {
			t.Errorf("import %q read from %s", ip, d)
		}
	}
	if l.dirOf("sync", "") == "" {
		t.Error("import \"sync\" names no directory")
	}
}
