package gosrc

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
)

// File is one source file of the program, at the path its frames name.
type File struct {
	Path string
	// Package is the file's import path ("" when unknown: the
	// directory's last element stands in).
	Package string
	Text    []byte
}

// Config says which program to read and where its libraries are.
type Config struct {
	// Files are the program's own files (a bundle's source_files):
	// every function in them is read with its body.
	Files []File
	// Libraries finds the library packages the program imports.
	Libraries *Libraries
	// Bodies are the directories of library packages whose function
	// bodies are read too (those the frames run in); the others are
	// read for their declarations only.
	Bodies []string
	// GOOS and GOARCH select files by build constraints ("" for
	// linux/amd64).
	GOOS, GOARCH string
	// MaxPackages bounds the packages type-checked (0: 2000); past it,
	// an import is read as empty.
	MaxPackages int
	// Roots are the directories of the program's files that its frames
	// run in: their packages, and what they import, are read (every
	// package linked into the binary is imported from one of them,
	// main's included); a package of Files that none imports is not.
	// Empty: every package of Files.
	Roots []string
}

// Program is a Go program read with types.
type Program struct {
	// lazy guards what is built on first use per function (graph).
	lazy  sync.Mutex
	fset  *token.FileSet
	cfg   Config
	ctx   build.Context
	pkgs  map[string]*pkg // by import path
	order []*pkg          // in the order their checks finished
	// own maps an import path to the directory of the program's files
	// that holds it; files its files by directory.
	own   map[string]string
	files map[string][]File
	// bodies are the directories whose bodies are read.
	bodies map[string]bool
	// byFile finds a parsed file by the path frames name.
	byFile map[string]*ast.File
	funcs  *funcIndex
	flow   *flow
	// gifts answers Given (given.go), built on first use.
	gifts givenIndex
	// goDone indexes the Done of (*sync.WaitGroup).Go calls by the
	// function started (future.go), built on first use.
	goDone     map[*Func][]event
	goDoneOnce sync.Once
	// called holds the cancel-function classes some statement calls,
	// doneMemo what each Done channel class answers (ctx.go); built on
	// first use.
	called     map[node]bool
	doneMemo   map[node]doneFacts
	calledOnce sync.Once
	// Problems says what could not be read, for the evidence's caveats.
	Problems []string
}

// pkg is one package being or having been type-checked.
type pkg struct {
	path, dir string
	files     []*ast.File
	types     *types.Package
	info      *types.Info // nil when bodies are not read
	bodies    bool
	opaque    bool // no source read: an empty stand-in
	loading   bool
	errs      int
}

// symbol is the prefix the runtime names the package's functions with:
// its import path, or "main" for a main package.
func (k *pkg) symbol() string {
	if k.types != nil && k.types.Name() == "main" {
		return "main"
	}
	return k.path
}

// asSymbol is fn as the package's own symbol prefix names it: a test
// binary names a main package's functions by its import path
// ("example.com/cmd/srv.F" for "main.F"); any other name is kept.
func (k *pkg) asSymbol(fn string) string {
	if k.symbol() != "main" || k.path == "main" {
		return fn
	}
	if rest, ok := strings.CutPrefix(fn, k.path+"."); ok {
		return "main." + rest
	}
	return fn
}

// Load reads the program: every package of cfg.Files, and what they
// import, type-checked with go/types.
func Load(cfg Config) *Program {
	if cfg.GOOS == "" {
		cfg.GOOS, cfg.GOARCH = "linux", "amd64"
	}
	if cfg.MaxPackages <= 0 {
		cfg.MaxPackages = 2000
	}
	p := &Program{fset: token.NewFileSet(), cfg: cfg, pkgs: map[string]*pkg{}, own: map[string]string{},
		files: map[string][]File{}, bodies: map[string]bool{}, byFile: map[string]*ast.File{}}
	p.ctx = buildContext(cfg)
	for _, d := range cfg.Bodies {
		p.bodies[filepath.Clean(d)] = true
	}
	for _, f := range cfg.Files {
		dir := filepath.Dir(f.Path)
		p.files[dir] = append(p.files[dir], f)
		ip := f.Package
		if ip == "" {
			ip = filepath.Base(dir)
		}
		if _, ok := p.own[ip]; !ok {
			p.own[ip] = dir
		}
	}
	roots := map[string]bool{}
	for _, d := range cfg.Roots {
		roots[filepath.Clean(d)] = true
	}
	for _, ip := range slices.Sorted(maps.Keys(p.own)) {
		if len(roots) > 0 && !roots[p.own[ip]] {
			continue // read only when imported
		}
		p.importPath(ip, "")
		p.importPath(ip+"_test", "") // an external test package, when there is one
	}
	for _, d := range cfg.Bodies {
		if ip := cfg.Libraries.importPathOf(d); ip != "" {
			p.importPath(ip, "")
		}
	}
	p.funcs = indexFuncs(p)
	p.flow = newFlow(p)
	return p
}

// buildContext is the build.Context that selects the target's files.
func buildContext(cfg Config) build.Context {
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = cfg.GOOS, cfg.GOARCH, false
	ctx.GOROOT, ctx.GOPATH = "", ""
	if l := cfg.Libraries; l != nil && l.GoVersion != "" {
		ctx.ReleaseTags = releaseTags(l.GoVersion)
	}
	return ctx
}

// releaseTags are the go1.N tags of Go version v ("go1.27.3").
func releaseTags(v string) []string {
	var minor int
	if _, err := fmt.Sscanf(strings.TrimPrefix(v, "go1."), "%d", &minor); err != nil || minor <= 0 {
		return build.Default.ReleaseTags
	}
	tags := make([]string, 0, minor)
	for i := 1; i <= minor; i++ {
		tags = append(tags, fmt.Sprintf("go1.%d", i))
	}
	return tags
}

// ImportFrom implements types.ImporterFrom over the program's files and
// its libraries; an import that cannot be read gives an empty package.
func (p *Program) ImportFrom(ip, srcDir string, _ types.ImportMode) (*types.Package, error) {
	if ip == "unsafe" {
		return types.Unsafe, nil
	}
	if k := p.importPath(ip, srcDir); k != nil && k.types != nil {
		return k.types, nil
	}
	return nil, fmt.Errorf("import cycle through %s", ip)
}

// Import implements types.Importer.
func (p *Program) Import(ip string) (*types.Package, error) { return p.ImportFrom(ip, "", 0) }

// importPath type-checks the package ip once (srcDir: the importing
// package's directory, for vendored standard-library imports) and returns
// it; nil while it is being checked (a cycle) or when it holds no files.
func (p *Program) importPath(ip, srcDir string) *pkg {
	if k, ok := p.pkgs[ip]; ok {
		if k.loading {
			return nil
		}
		return k
	}
	dir, files, bodies := p.locate(ip, srcDir)
	if len(files) == 0 {
		if strings.HasSuffix(ip, "_test") {
			return nil
		}
		return p.opaque(ip, "no source read")
	}
	if len(p.order) >= p.cfg.MaxPackages {
		return p.opaque(ip, fmt.Sprintf("past the bound of %d packages", p.cfg.MaxPackages))
	}
	k := &pkg{path: ip, dir: dir, bodies: bodies, loading: true}
	p.pkgs[ip] = k
	k.files = p.parse(files, bodies)
	p.check(k)
	if !bodies {
		k.files = nil // only the types are read of it: let the syntax go
	}
	k.loading = false
	p.order = append(p.order, k)
	return k
}

// opaque records ip as a package whose source is not read: an empty
// package named as its path ends, so that files importing it still check.
func (p *Program) opaque(ip, why string) *pkg {
	k := &pkg{path: ip, opaque: true, types: types.NewPackage(ip, guessName(ip))}
	k.types.MarkComplete()
	p.pkgs[ip] = k
	if why != "" && !p.cfg.Libraries.isStd(ip) || why != "no source read" {
		p.Problems = append(p.Problems, fmt.Sprintf("%s: %s", ip, why))
	}
	return k
}

// guessName is the name a package most likely declares: its path's last
// element without a major-version element (k8s.io/x/v2 → x), a ".vN" or
// "go-" affix (gopkg.in/yaml.v3 → yaml).
func guessName(ip string) string {
	elems := strings.Split(ip, "/")
	name := elems[len(elems)-1]
	if len(elems) > 1 && len(name) > 1 && name[0] == 'v' && strings.Trim(name[1:], "0123456789") == "" {
		name = elems[len(elems)-2]
	}
	if i := strings.Index(name, ".v"); i > 0 {
		name = name[:i]
	}
	name = strings.TrimPrefix(name, "go-")
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '.' {
			return '_'
		}
		return r
	}, name)
}

// locate finds the files of package ip: the program's own (a directory
// of cfg.Files; "x_test" for the external tests in x's directory), or a
// library's on disk. bodies says whether function bodies are read.
func (p *Program) locate(ip, srcDir string) (dir string, files []File, bodies bool) {
	test := strings.HasSuffix(ip, "_test")
	base := strings.TrimSuffix(ip, "_test")
	if d, ok := p.own[base]; ok {
		return d, p.selectFiles(d, p.files[d], test), true
	}
	if test {
		return "", nil, false
	}
	d := p.cfg.Libraries.dirOf(ip, srcDir)
	if d == "" {
		return "", nil, false
	}
	fs := p.cfg.Libraries.read(d)
	return d, p.selectFiles(d, fs, false), p.bodies[d]
}

// selectFiles keeps the files the target's build would compile into one
// package of dir: matching build constraints, the package clause most
// files share (test files of the same package included), or for test
// the external "_test" package's.
func (p *Program) selectFiles(dir string, fs []File, test bool) []File {
	byName := map[string][]File{}
	for _, f := range fs {
		name := filepath.Base(f.Path)
		if !strings.HasSuffix(name, ".go") || !p.matches(dir, f) {
			continue
		}
		clause := packageClause(f.Text)
		if clause == "" || clause == "documentation" {
			continue
		}
		byName[clause] = append(byName[clause], f)
	}
	var best string
	for name, list := range byName {
		ext := strings.HasSuffix(name, "_test")
		if ext != test {
			continue
		}
		if best == "" || len(list) > len(byName[best]) || len(list) == len(byName[best]) && name < best {
			best = name
		}
	}
	out := byName[best]
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// matches reports whether the target's build compiles f (its name's
// GOOS/GOARCH suffixes and its //go:build line).
func (p *Program) matches(dir string, f File) bool {
	ctx := p.ctx
	ctx.OpenFile = func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(f.Text)), nil }
	ok, err := ctx.MatchFile(dir, filepath.Base(f.Path))
	return err == nil && ok
}

// packageClause reads the name in a file's package clause, "" when it
// has none.
func packageClause(src []byte) string {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.PackageClauseOnly)
	if err != nil || f.Name == nil {
		return ""
	}
	return f.Name.Name
}

// parse parses files; one that does not parse is left out.
func (p *Program) parse(files []File, bodies bool) []*ast.File {
	var out []*ast.File
	for _, f := range files {
		af, err := parser.ParseFile(p.fset, f.Path, f.Text, parser.SkipObjectResolution)
		if err != nil && af == nil {
			p.Problems = append(p.Problems, fmt.Sprintf("%s: %v", f.Path, err))
			continue
		}
		out = append(out, af)
		if bodies {
			p.byFile[f.Path] = af
		}
	}
	return out
}

// check type-checks k, recording (for a package whose bodies are read)
// what every expression means. Errors leave parts untyped, nothing more.
func (p *Program) check(k *pkg) {
	conf := types.Config{Importer: p, FakeImportC: true, IgnoreFuncBodies: !k.bodies,
		Sizes: types.SizesFor("gc", p.cfg.GOARCH), Error: func(error) { k.errs++ }}
	if k.bodies {
		k.info = &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
			Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{},
			Implicits: map[ast.Node]types.Object{}, Instances: map[*ast.Ident]types.Instance{}}
	}
	k.types, _ = conf.Check(k.path, p.fset, k.files, k.info)
	if k.types == nil {
		k.types = types.NewPackage(k.path, guessName(k.path))
	}
}
