package analysis

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Bounds on the library source read for one report.
const (
	maxLibPackages = 32      // package directories parsed
	maxLibFiles    = 200     // files of one package
	maxLibFile     = 2 << 20 // bytes of one file
)

func newLibSource(goVersion string) *libSource {
	return &libSource{goVersion: goVersion, pkgs: map[string]*libPkg{}}
}

// trusted reports whether the source at path is the one the target was
// built from (see [libSource]).
func (ls *libSource) trusted(path string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	if strings.Contains(path, "/pkg/mod/") && strings.Contains(path, "@v") {
		return true
	}
	root := build.Default.GOROOT
	if root == "" || !strings.HasPrefix(path, filepath.Join(root, "src")+"/") {
		return false
	}
	if ls.goVersion == "" {
		return ls.matchesFrames(path)
	}
	v, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		return false
	}
	first, _, _ := strings.Cut(string(v), "\n")
	return strings.TrimSpace(first) == ls.goVersion
}

// pkgAt parses the package whose file a frame names; nil when that
// source is not trusted or not readable.
func (ls *libSource) pkgAt(file string) *libPkg {
	if ls == nil || file == "" || !ls.trusted(file) {
		return nil
	}
	dir := filepath.Dir(file)
	if p, ok := ls.pkgs[dir]; ok {
		return p
	}
	if len(ls.pkgs) >= maxLibPackages {
		return nil
	}
	p := parseLibPkg(dir)
	ls.pkgs[dir] = p
	return p
}

// parseLibPkg parses the non-test Go files of a directory for their
// declarations (no function bodies).
func parseLibPkg(dir string) *libPkg {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	p := &libPkg{dir: dir, funcs: map[string]*ast.FuncDecl{}, types: map[string]ast.Expr{}, methods: map[string][]string{}, decls: map[string]*ast.FuncDecl{}}
	fset := token.NewFileSet()
	n := 0
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if n++; n > maxLibFiles {
			break
		}
		path := filepath.Join(dir, name)
		if fi, err := e.Info(); err != nil || fi.Size() > maxLibFile {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		p.add(f)
	}
	for k := range p.methods {
		sort.Strings(p.methods[k])
	}
	return p
}

// add records a file's top-level declarations.
func (p *libPkg) add(f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				p.funcs[d.Name.Name] = d
				p.decls[d.Name.Name] = d
				continue
			}
			if len(d.Recv.List) == 1 {
				if t := baseTypeName(d.Recv.List[0].Type); t != "" {
					p.methods[t] = append(p.methods[t], d.Name.Name)
					p.decls[t+"."+d.Name.Name] = d
				}
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					p.types[s.Name.Name] = s.Type
				case *ast.ValueSpec:
					p.vars = append(p.vars, s)
				}
			}
		}
	}
}

// methodSet lists the methods of the package's type name, with those of
// the types it embeds (struct fields without a name, embedded
// interfaces) when they are declared in the same package, and an
// interface's own methods. Pointer and value receivers are not told
// apart: the leaked object is held as the constructor returns it.
func (p *libPkg) methodSet(name string) []string {
	seen := map[string]bool{}
	var out []string
	var walk func(string, int)
	walk = func(t string, depth int) {
		if depth > 8 || seen["type "+t] {
			return
		}
		seen["type "+t] = true
		for _, m := range p.methods[t] {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
		var fields []*ast.Field
		switch x := p.types[t].(type) {
		case *ast.StructType:
			fields = x.Fields.List
		case *ast.InterfaceType:
			fields = x.Methods.List
		case *ast.Ident, *ast.IndexExpr, *ast.StarExpr:
			walk(baseTypeName(x), depth+1) // type T = U, type T U
		}
		for _, f := range fields {
			if len(f.Names) == 0 {
				walk(baseTypeName(f.Type), depth+1)
				continue
			}
			if _, ok := f.Type.(*ast.FuncType); ok && p.types[t] != nil {
				if _, iface := p.types[t].(*ast.InterfaceType); iface {
					for _, n := range f.Names {
						if !seen[n.Name] {
							seen[n.Name] = true
							out = append(out, n.Name)
						}
					}
				}
			}
		}
	}
	walk(name, 0)
	sort.Strings(out)
	return out
}

// result is the first result type of a top-level function: its type
// name in the package (pointer kept in ptr), "" when it is not a type of
// the package (an error, a func, another package's type).
func (p *libPkg) result(fn string) (name string, ptr bool) {
	d := p.funcs[fn]
	if d == nil || d.Type.Results == nil || len(d.Type.Results.List) == 0 {
		return "", false
	}
	e := d.Type.Results.List[0].Type
	if s, ok := e.(*ast.StarExpr); ok {
		e, ptr = s.X, true
	}
	name = baseTypeName(e)
	if _, ok := p.types[name]; !ok {
		return "", false
	}
	return name, ptr
}
