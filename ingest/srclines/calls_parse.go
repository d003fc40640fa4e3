package srclines

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/leakscope/leakscope/ingest/schema"
	"github.com/leakscope/leakscope/internal/gosym"
)

// packageName is the package clause of a directory's first non-test Go
// file ("" when it has none that parses).
func packageName(dir string) string {
	for _, p := range goFiles(dir) {
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.PackageClauseOnly)
		if err == nil {
			return f.Name.Name
		}
	}
	return ""
}

// goFiles lists, sorted, the non-test Go files of a directory.
func goFiles(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			out = append(out, filepath.Join(dir, n))
		}
	}
	sort.Strings(out)
	return out
}

// indexPackage emits the source_calls rows of one package directory of
// mod, of a test binary when test, with its test files when tested (the
// package the test binary tests), within the index's bounds.
func (s *Snapshotter) indexPackage(emit func(schema.SourceCall) error, mod module, dir string, test, tested bool) error {
	rel, err := filepath.Rel(mod.read, dir)
	if err != nil {
		return nil
	}
	files := goFiles(dir)
	if tested {
		files = append(files, testFiles(dir)...)
	}
	for _, p := range files {
		if s.calls.files >= maxIndexFiles || s.calls.text >= maxIndexText {
			return s.truncate(emit, mod)
		}
		data, err := readBounded(p)
		if err != nil {
			continue
		}
		s.calls.files++
		s.calls.text += int64(len(data))
		fset := token.NewFileSet()
		// Object resolution is kept: a package qualifier is an
		// identifier the file does not resolve to a declaration.
		f, err := parser.ParseFile(fset, p, data, 0)
		if err != nil {
			continue
		}
		named := filepath.ToSlash(filepath.Join(mod.named, rel, filepath.Base(p)))
		for _, r := range fileCalls(fset, f, named, symbolPackage(mod, rel, f.Name.Name, test)) {
			if err := emit(r); err != nil {
				return err
			}
		}
		if err := emit(schema.SourceCall{File: named, Callee: mod.path, Kind: schema.CallKindFile}); err != nil {
			return err
		}
	}
	return nil
}

// symbolPackage is how the binary names the functions of a file of
// package name in directory rel of mod: by import path, "main" for a
// program's main package, and with "_test" for a test binary's external
// test package; a test binary names even a main package by its import
// path.
func symbolPackage(mod module, rel, name string, test bool) string {
	ip := mod.path
	if rel != "." {
		ip = path.Join(mod.path, filepath.ToSlash(rel))
	}
	switch {
	case test && strings.HasSuffix(name, "_test"):
		return ip + "_test"
	case name == "main" && !test:
		return "main"
	}
	return ip
}

// truncate emits, once per module, the row saying its index stopped at
// its bounds.
func (s *Snapshotter) truncate(emit func(schema.SourceCall) error, mod module) error {
	if s.calls.truncated[mod.path] {
		return nil
	}
	s.calls.truncated[mod.path] = true
	return emit(schema.SourceCall{File: filepath.ToSlash(mod.named), Callee: mod.path, Kind: schema.CallKindTruncated})
}

// fileCalls lists the calls of a parsed file's declarations into other
// packages: package-qualified calls and values of package-qualified
// types built (composite literals, new), each under the symbol of the
// declaration it is in.
func fileCalls(fset *token.FileSet, f *ast.File, file, pkg string) []schema.SourceCall {
	imports := importNames(f)
	var out []schema.SourceCall
	for _, d := range f.Decls {
		sym := declSymbol(pkg, d)
		ast.Inspect(d, func(n ast.Node) bool {
			callee, kind := qualified(n, imports)
			if callee != "" {
				out = append(out, schema.SourceCall{File: file, Function: sym, Line: int64(fset.Position(n.Pos()).Line), Callee: callee, Kind: kind})
			}
			return true
		})
	}
	return out
}

// qualified reports what a node calls or builds of another package: a
// call of pkg.F (or pkg.F[T]), a composite literal of pkg.T, new(pkg.T).
func qualified(n ast.Node, imports map[string]string) (string, string) {
	switch x := n.(type) {
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "new" && id.Obj == nil && len(x.Args) == 1 {
			if t := qualifiedName(x.Args[0], imports); t != "" {
				return t, schema.CallKindLiteral
			}
		}
		if fn := qualifiedName(x.Fun, imports); fn != "" {
			return fn, schema.CallKindCall
		}
	case *ast.CompositeLit:
		if t := qualifiedName(x.Type, imports); t != "" {
			return t, schema.CallKindLiteral
		}
	}
	return "", ""
}

// qualifiedName is "importpath.Name" for an expression pkg.Name or
// pkg.Name[T...] whose pkg is an import of the file (an identifier the
// file does not declare); "" otherwise.
func qualifiedName(e ast.Expr, imports map[string]string) string {
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok || id.Obj != nil {
		return ""
	}
	if p, ok := imports[id.Name]; ok {
		return p + "." + sel.Sel.Name
	}
	return ""
}

// importNames maps the names a file refers to its imports by to their
// paths: the import's own name, else its path's last element (less a
// major version suffix: /v2, .v3).
func importNames(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		name := defaultImportName(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		if name != "_" && name != "." {
			out[name] = p
		}
	}
	return out
}

// defaultImportName is the name an import path's package is usually
// declared with: its last element, skipping a /vN element and cutting a
// .vN suffix (gopkg.in/yaml.v3 → yaml).
func defaultImportName(p string) string {
	elems := strings.Split(p, "/")
	last := elems[len(elems)-1]
	if len(elems) > 1 && majorVersion(last) {
		last = elems[len(elems)-2]
	}
	if i := strings.LastIndex(last, ".v"); i > 0 && majorVersion(last[i+1:]) {
		last = last[:i]
	}
	return last
}

func majorVersion(s string) bool {
	if len(s) < 2 || s[0] != 'v' {
		return false
	}
	_, err := strconv.Atoi(s[1:])
	return err == nil
}

// declSymbol is the symbol a stack frame names a declaration's code by:
// pkg.F, pkg.(*T).M, pkg.T.M (with [...] for type parameters), and
// pkg.init for package-level variables.
func declSymbol(pkg string, d ast.Decl) string {
	fd, ok := d.(*ast.FuncDecl)
	if !ok {
		return pkg + ".init"
	}
	name := fd.Name.Name
	if fd.Type.TypeParams != nil {
		name += "[...]"
	}
	if fd.Recv == nil || len(fd.Recv.List) != 1 {
		return pkg + "." + name
	}
	t := fd.Recv.List[0].Type
	ptr := false
	if st, ok := t.(*ast.StarExpr); ok {
		ptr, t = true, st.X
	}
	recv := gosym.BaseTypeName(t)
	if _, generic := t.(*ast.Ident); !generic {
		recv += "[...]"
	}
	if ptr {
		return pkg + ".(*" + recv + ")." + name
	}
	return pkg + "." + recv + "." + name
}
