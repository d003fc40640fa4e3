package analysis

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/leakscope/leakscope/analysis/flame"
	"github.com/leakscope/leakscope/internal/gosym"
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
				if t := gosym.BaseTypeName(d.Recv.List[0].Type); t != "" {
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
			walk(gosym.BaseTypeName(x), depth+1) // type T = U, type T U
		}
		for _, f := range fields {
			if len(f.Names) == 0 {
				walk(gosym.BaseTypeName(f.Type), depth+1)
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
	name = gosym.BaseTypeName(e)
	if _, ok := p.types[name]; !ok {
		return "", false
	}
	return name, ptr
}

// framesByFile lists the bundle's frames by file.
func framesByFile(st *stackTable) map[string][]Frame {
	out := map[string][]Frame{}
	for _, f := range st.frames {
		if f.File != "" && f.Line > 0 {
			out[f.File] = append(out[f.File], f)
		}
	}
	return out
}

// matchesFrames reports whether the file on this machine is, as far as
// the bundle can tell, the one the target was built from: the bundle has
// frames in it, and each lies inside a declaration of its function in
// the file (by go/parser's line ranges). A Go root of another version
// moves lines, so its declarations no longer hold the frames' lines.
func (ls *libSource) matchesFrames(path string) bool {
	if ok, seen := ls.matched[path]; seen {
		return ok
	}
	if ls.matched == nil {
		ls.matched = map[string]bool{}
	}
	ok := declsHoldFrames(path, ls.frames[path])
	ls.matched[path] = ok
	return ok
}

// PatternLibraryObject is the incident pattern of goroutines that run
// library code only, started by an object the user's code creates per
// call and never releases (no library rule names the shape).
const PatternLibraryObject = "library-object-not-released"

// newReleaseFinder is the release finder of a loaded bundle: the
// library source at the frames' paths, the functions its frames and its
// manifest name, and its snapshot of the user's source.
func newReleaseFinder(in *loaded) *releaseFinder {
	t := in.b.Manifest.Target
	rf := &releaseFinder{src: in.libSource(), syms: map[string]bool{}, user: in.src}
	for _, f := range in.st.frames {
		rf.syms[f.Function] = true
	}
	for _, m := range t.Methods {
		rf.syms[m] = true
	}
	return rf
}

// libraryOwned reports whether an incident's goroutines belong to a
// library object: at least one member runs library code only, and every
// other goroutine member is the user's code parked in a method of the
// package those run (a worker in the object's Get). Its fix is then the
// library's release of the object, never a change to code the user does
// not own.
func libraryOwned(sus []Suspect, members []int) bool {
	own, parked := libraryMembers(sus, members)
	if len(own) == 0 {
		return false
	}
	pkgs := map[string]bool{}
	for _, s := range own {
		pkgs[libraryEntry(s.Stack)] = true
	}
	for _, s := range parked {
		if m := parkedMethod(s.Stack); m.Function == "" || !pkgs[flame.PackageOf(m.Function)] {
			return false
		}
	}
	return true
}

// libraryMembers splits an incident's goroutine members into those that
// run library code only and those with a frame of the user's code;
// a member without a stack counts as the user's.
func libraryMembers(sus []Suspect, members []int) (own, parked []Suspect) {
	for _, i := range members {
		s := sus[i]
		if s.Kind != KindGoroutine {
			continue
		}
		if _, at := userFrame(s.Stack); at >= 0 || len(s.Stack) == 0 {
			parked = append(parked, s)
		} else {
			own = append(own, s)
		}
	}
	return own, parked
}

// libraryEntry is the package of the outermost library frame of a
// goroutine that runs library code only (the runtime's aside).
func libraryEntry(stack []Frame) string {
	for i := len(stack) - 1; i >= 0; i-- {
		if !isRuntime(stack[i].Function) {
			return flame.PackageOf(stack[i].Function)
		}
	}
	return ""
}

// parkedMethod is the library method the user's innermost frame called
// and the goroutine is parked in (the frame just leaf-side of it), or
// the zero Frame when that frame is no method of a library type.
func parkedMethod(stack []Frame) Frame {
	_, at := userFrame(stack)
	if at < 1 {
		return Frame{}
	}
	f := stack[at-1]
	if isRuntime(f.Function) || len(receiverRef(f)) == 0 {
		return Frame{}
	}
	return f
}

// libraryIncident names a library-owned incident by the object it
// leaks and that object's release.
func libraryIncident(inc *Incident, sus []Suspect, members []int, rf *releaseFinder) {
	var ms []Suspect
	for _, i := range members {
		if sus[i].Kind == KindGoroutine {
			ms = append(ms, sus[i])
		}
	}
	inc.Pattern = PatternLibraryObject
	r := rf.find(ms, inc.Origin)
	if r == nil {
		_, called := originCall(ms, inc.Origin)
		inc.Title = "library object created per call and never released"
		inc.Description = "The leaked goroutines run library code only: they belong to an object the user's code creates and never releases (closes, shuts down or stops), so every call leaves one behind. Which method releases it is not known: the bundle holds neither the library's source nor a symbol table naming it."
		inc.Fix = unknownReleaseFix(inc.Origin, called.Function)
		inc.Evidence = append(inc.Evidence, Evidence{Kind: "release", Detail: "no release method found: the library's source is not readable where the report is made and no known function of the binary is a Close, Shutdown, ShutDown, Stop, Cancel or CloseIdleConnections method of the leaked goroutines' types"})
		return
	}
	inc.Title = fmt.Sprintf("%s created per call and never released", r.qualified())
	inc.Description = fmt.Sprintf("The leaked goroutines run library code only: they belong to a `%s` that the user's code creates on every call and never releases, and they run until its `%s` is called. Every call leaves one behind, with what it holds.", r.qualified(), r.Method)
	inc.Fix = releaseFix(r, inc.Origin)
	if _, parked := libraryMembers(sus, members); len(parked) > 0 {
		inc.Description = strings.Replace(inc.Description, "The leaked goroutines run library code only: they belong", "The leaked goroutines belong", 1) + parkedText(parked, r)
	}
	basis := "the library's source (its declarations at the frames' paths)"
	if r.Basis == releaseSymbols {
		basis = "the functions the bundle knows of the binary (no library source readable)"
	}
	d := fmt.Sprintf("the leaked goroutines run library code only; their object is a `%s`", r.qualified())
	if r.Constructor != "" {
		d += fmt.Sprintf(" made by `%s`", strings.ReplaceAll(shortName(r.Constructor), "[...]", ""))
	}
	inc.Evidence = append(inc.Evidence, Evidence{Kind: "release", Detail: d + fmt.Sprintf(", released by `%s`, per %s", r.Method, basis)})
}

// parkedText says which of the user's goroutines wait in the object's
// methods, each with its pattern: the symptom inside the incident.
func parkedText(parked []Suspect, r *libRelease) string {
	var parts []string
	for _, s := range parked {
		u, _ := userFrame(s.Stack)
		m := parkedMethod(s.Stack)
		_, _, _, name := splitFunc(m.Function)
		parts = append(parts, fmt.Sprintf("`%s` waits in its `%s` (%s)", shortName(u.Function), name, s.Pattern))
	}
	return fmt.Sprintf(" The user's goroutines parked in it wait for work the object will never get: %s; they return once `%s` is called.", strings.Join(parts, "; "), r.Method)
}
