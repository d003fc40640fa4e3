package analysis

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"

	"github.com/leakscope/leakscope/analysis/flame"
	"github.com/leakscope/leakscope/analysis/internal/gosrc"
	"github.com/leakscope/leakscope/analysis/internal/tables"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
	"github.com/leakscope/leakscope/internal/gosym"
)

// programSource is what the bundle and this machine hold of the program
// as Go: the bundle's whole files of the program's packages and the
// library source the frames run in, read with types on first use.
type programSource struct {
	files []gosrc.File
	libs  *gosrc.Libraries
	// bodies are the library directories the frames run in; roots the
	// program's own directories they run in.
	bodies, roots []string
	// root maps the Go root the frames name to the one read here.
	root [2]string
	prog *gosrc.Program
	// err says why the program could not be read (a panic in the
	// reading is caught and reported, never raised).
	err string
}

// readSourceFiles reads the source_files table.
func readSourceFiles(b *bundle.Bundle, mem memory.Allocator) ([]gosrc.File, error) {
	var out []gosrc.File
	err := tables.ReadSourceFiles(b, mem, func(r schema.SourceFile) {
		out = append(out, gosrc.File{Path: strings.Clone(r.File), Package: strings.Clone(r.Package), Text: []byte(r.Text)})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// newProgramSource prepares to read the program: its files, and the
// libraries the frames run in, from the Go root of the target's version
// and the module cache.
func newProgramSource(files []gosrc.File, st *stackTable, goVersion string) *programSource {
	ps := &programSource{}
	for _, f := range files {
		if filepath.Base(f.Path) != "go.mod" {
			ps.files = append(ps.files, f)
		}
	}
	ps.libs = &gosrc.Libraries{ModCache: modCache(), Modules: map[string]string{}, GoVersion: goVersion}
	for _, f := range files {
		if filepath.Base(f.Path) == "go.mod" {
			addRequires(ps.libs.Modules, f.Text)
		}
	}
	frames := st.sortedFrames()
	ps.root = goRootFor(frames, goVersion)
	ps.libs.GoRoot = ps.root[1]
	if ps.libs.GoRoot == "" {
		ps.libs.APIRoot = build.Default.GOROOT
	}
	ps.bodies, ps.roots = ps.frameDirs(frames)
	return ps
}

// frameDirs lists the directories the frames run in: of libraries (in
// the Go root read or the module cache, the reading's own machinery
// aside), and of the program's files.
func (ps *programSource) frameDirs(frames []Frame) (bodies, roots []string) {
	own := map[string]bool{}
	for _, f := range ps.files {
		own[filepath.Dir(f.Path)] = true
	}
	dirs := map[string]bool{}
	for _, f := range frames {
		if d := filepath.Dir(f.File); own[d] && !dirs[d] {
			dirs[d] = true
			roots = append(roots, d)
		}
		p := ps.diskPath(f.File)
		if mod, ver, ok := moduleOfPath(p); ok {
			ps.libs.Modules[mod] = ver
		}
		if ps.root[1] != "" && strings.HasPrefix(p, ps.root[1]+"/src/") || isModCache(p) {
			if d := filepath.Dir(p); !dirs[d] && !gosrcMachinery(flame.PackageOf(gosym.ElideTypeArgs(f.Function))+".") && !gosrc.Machinery(f.Function) {
				dirs[d] = true
				bodies = append(bodies, d)
			}
		}
	}
	return bodies, roots
}

// program returns the program read with types, once; nil when it holds
// none of the program's files (or reading it failed).
func (ps *programSource) program() *gosrc.Program {
	if ps == nil || ps.prog != nil || ps.err != "" || len(ps.files) == 0 {
		if ps == nil {
			return nil
		}
		return ps.prog
	}
	ps.prog, ps.err = programs.get(ps.key(), func() *gosrc.Program {
		return gosrc.Load(gosrc.Config{Files: ps.files, Libraries: ps.libs, Bodies: ps.bodies, Roots: ps.roots})
	})
	return ps.prog
}

// key identifies what the program is read from: its files, the
// libraries' places and versions, the library bodies read.
func (ps *programSource) key() string {
	h := sha256.New()
	for _, f := range ps.files {
		fmt.Fprintf(h, "%s\x00%s\x00%d\x00", f.Path, f.Package, len(f.Text))
		h.Write(f.Text)
	}
	fmt.Fprintf(h, "\x01%s\x00%s\x00%s\x00%s\x00", ps.libs.GoRoot, ps.libs.APIRoot, ps.libs.GoVersion, ps.libs.ModCache)
	mods := make([]string, 0, len(ps.libs.Modules))
	for m, v := range ps.libs.Modules {
		mods = append(mods, m+"@"+v)
	}
	slices.Sort(mods)
	fmt.Fprintf(h, "%v\x01%v\x01%v", mods, ps.bodies, ps.roots)
	return hex.EncodeToString(h.Sum(nil))
}

// programCache keeps the programs read lately, so that analyses of
// bundles of one program (every capture of a service, every run of a
// test) read it once. A Program is only read once loaded, so analyses
// share it.
type programCache struct {
	mu      sync.Mutex
	entries map[string]*cachedProgram
	order   []string // least recently used first
}

// cachedProgram is one program, loaded once by whoever asks first.
type cachedProgram struct {
	once sync.Once
	p    *gosrc.Program
	err  string
}

// maxPrograms bounds the programs kept read.
const maxPrograms = 4

// programs is the process's cache of programs read.
var programs = &programCache{entries: map[string]*cachedProgram{}}

// get returns the program of key, loading it once; a panic while
// loading is reported as err, never raised.
func (c *programCache) get(key string, load func() *gosrc.Program) (*gosrc.Program, string) {
	c.mu.Lock()
	e := c.entries[key]
	if e == nil {
		e = &cachedProgram{}
		c.entries[key] = e
		if len(c.order) >= maxPrograms {
			delete(c.entries, c.order[0])
			c.order = c.order[1:]
		}
	} else {
		c.order = slices.DeleteFunc(c.order, func(k string) bool { return k == key })
	}
	c.order = append(c.order, key)
	c.mu.Unlock()
	e.once.Do(func() {
		defer func() {
			if r := recover(); r != nil {
				e.p, e.err = nil, fmt.Sprintf("reading the program as Go failed: %v\n%s", r, debug.Stack())
			}
		}()
		e.p = load()
	})
	return e.p, e.err
}

// frames turns a stack's frames into the program's, their paths mapped
// to the Go root read here.
func (ps *programSource) frames(fr []Frame) []gosrc.Frame {
	out := make([]gosrc.Frame, len(fr))
	for i, f := range fr {
		out[i] = gosrc.Frame{Function: f.Function, File: ps.diskPath(f.File), Line: f.Line}
	}
	return out
}

// diskPath maps a frame's file in the Go root the frames name to the
// same file in the Go root read here.
func (ps *programSource) diskPath(file string) string {
	if ps.root[0] != "" && ps.root[0] != ps.root[1] {
		if rel, ok := strings.CutPrefix(file, ps.root[0]); ok {
			return ps.root[1] + rel
		}
	}
	return file
}

// gosrcMachinery reports frames in packages the program reading models
// rather than reads: the runtime, sync/atomic, internal packages. sync's
// bodies are read only for a frame in its code beyond the types gosrc
// models (gosrc.Machinery): Once, Map, Pool.
func gosrcMachinery(fn string) bool {
	for _, p := range []string{"runtime.", "runtime/", "internal/", "sync/", "syscall.", "reflect.", "time.", "unsafe."} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// goRootFor returns the Go root the frames name and the one to read for
// it: the first of that root itself, this machine's, and the toolchain
// of the target's version in the module cache (fetched through the
// module proxy when missing) that is the target's version, or, the
// version unknown (a dump alone, from a root whose path names none),
// whose files hold every frame's line inside its function. Empty when
// none can be trusted.
func goRootFor(frames []Frame, goVersion string) [2]string {
	named := ""
	for _, f := range frames {
		if named = goRootOf(f); named != "" {
			break
		}
	}
	if named == "" {
		return [2]string{}
	}
	if goVersion == "" {
		goVersion = versionInPath(named)
	}
	for _, cand := range []string{named, build.Default.GOROOT, cachedToolchain(goVersion)} {
		if cand != "" && rootTrusted(cand, named, goVersion, frames) {
			return [2]string{named, cand}
		}
	}
	if cand := fetchToolchain(goVersion); cand != "" && rootTrusted(cand, named, goVersion, frames) {
		return [2]string{named, cand}
	}
	return [2]string{}
}

// rootTrusted reports whether Go root cand holds the source the frames
// (naming root named) ran: its VERSION is the target's, or, the version
// unknown, its files hold the frames' lines.
func rootTrusted(cand, named, goVersion string, frames []Frame) bool {
	if !isDirPath(filepath.Join(cand, "src")) {
		return false
	}
	if goVersion != "" {
		return rootVersion(cand) == goVersion
	}
	return rootHoldsFrames(cand, named, frames)
}

// versionPath finds a Go version in a Go root's path
// (toolchain@v0.0.1-go1.27.3.linux-amd64, sdk/go1.24.9).
var versionPath = regexp.MustCompile(`go1\.[0-9]+(\.[0-9]+)?`)

// versionInPath is the Go version a Go root's path names, "" for none.
func versionInPath(root string) string { return versionPath.FindString(filepath.Base(root)) }

// goRootOf is the Go root a standard-library frame's file is in (the
// file is ROOT/src/PKG/x.go for a function of package PKG), "" for
// another frame.
func goRootOf(f Frame) string {
	pkg := flame.PackageOf(gosym.ElideTypeArgs(f.Function))
	if !stdRoot(pkg) {
		return ""
	}
	root, ok := strings.CutSuffix(filepath.Dir(f.File), "/src/"+pkg)
	if !ok {
		return ""
	}
	return root
}

// rootVersion reads a Go root's VERSION ("go1.26.8"), "" when none.
func rootVersion(root string) string {
	v, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(string(v), "\n")
	return strings.TrimSpace(first)
}

// rootHoldsFrames reports whether every frame in the Go root the frames
// name lies, in root's copy of its file, inside a declaration of its
// function: of the first eight Go files by path (frames in assembly,
// such as runtime.goexit's, have no declaration to check).
func rootHoldsFrames(root, named string, frames []Frame) bool {
	byFile := map[string][]Frame{}
	for _, f := range frames {
		if goRootOf(f) != named {
			continue // a function the runtime provides for another package (linkname)
		}
		if rel, ok := strings.CutPrefix(f.File, named+"/src/"); ok && filepath.Ext(rel) == ".go" {
			p := filepath.Join(root, "src", rel)
			byFile[p] = append(byFile[p], f)
		}
	}
	files := slices.Sorted(maps.Keys(byFile))
	for _, file := range files[:min(len(files), 8)] {
		if !declsHoldFrames(file, byFile[file]) {
			return false
		}
	}
	return len(files) > 0
}

// modCache is this machine's module cache.
func modCache() string {
	if d := os.Getenv("GOMODCACHE"); d != "" {
		return d
	}
	gp := build.Default.GOPATH
	if i := strings.IndexByte(gp, os.PathListSeparator); i >= 0 {
		gp = gp[:i]
	}
	if gp == "" {
		return ""
	}
	return filepath.Join(gp, "pkg", "mod")
}

// isModCache reports a path inside a module cache (…/pkg/mod/x@v…/).
func isModCache(p string) bool {
	return strings.Contains(p, "/pkg/mod/") && strings.Contains(p, "@")
}

// moduleOfPath reads the module and version of a module cache path.
func moduleOfPath(p string) (mod, ver string, ok bool) {
	i := strings.Index(p, "/pkg/mod/")
	if i < 0 {
		return "", "", false
	}
	rel := p[i+len("/pkg/mod/"):]
	at := strings.Index(rel, "@")
	if at < 0 || strings.HasPrefix(rel, "cache/") {
		return "", "", false
	}
	mod, err := module.UnescapePath(rel[:at])
	if err != nil {
		return "", "", false
	}
	ver = rel[at+1:]
	if j := strings.IndexByte(ver, '/'); j >= 0 {
		ver = ver[:j]
	}
	if ver, err = module.UnescapeVersion(ver); err != nil {
		return "", "", false
	}
	return mod, ver, true
}

// addRequires adds a go.mod's requirements to mods.
func addRequires(mods map[string]string, text []byte) {
	f, err := modfile.ParseLax("go.mod", text, nil)
	if err != nil {
		return
	}
	for _, r := range f.Require {
		if _, ok := mods[r.Mod.Path]; !ok {
			mods[r.Mod.Path] = r.Mod.Version
		}
	}
	for _, r := range f.Replace {
		if r.New.Version != "" {
			mods[r.Old.Path] = r.New.Version
		}
	}
}

// sortedFrames lists the bundle's frames by id.
func (st *stackTable) sortedFrames() []Frame {
	ids := make([]int64, 0, len(st.frames))
	for id := range st.frames {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]Frame, len(ids))
	for i, id := range ids {
		out[i] = st.frames[id]
	}
	return out
}

func isDirPath(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// toolchainModule is the module path of the Go toolchains the module
// proxy serves, each version a Go root (golang.org/toolchain@v0.0.1-go1.27.3.linux-amd64).
const toolchainModule = "golang.org/toolchain"

// toolchainVersion is the module version of Go version v's toolchain.
func toolchainVersion(v string) string {
	return "v0.0.1-" + v + "." + runtime.GOOS + "-" + runtime.GOARCH
}

// cachedToolchain is the module cache's Go root of version v, "" when
// the cache holds none.
func cachedToolchain(v string) string {
	mc := modCache()
	if v == "" || mc == "" {
		return ""
	}
	d := filepath.Join(mc, toolchainModule+"@"+toolchainVersion(v))
	if isDirPath(d) {
		return d
	}
	return ""
}

// fetches remembers the toolchains asked of the module proxy, so that
// each is fetched (or fails) once per process.
var fetches sync.Map // version → *toolchainFetch

// toolchainFetch is one fetch of a toolchain.
type toolchainFetch struct {
	once sync.Once
	dir  string
}

// fetchTimeout bounds a toolchain's download.
const fetchTimeout = 3 * time.Minute

// fetchToolchain downloads Go version v's toolchain into the module
// cache through the module proxy (go mod download), once per process;
// "" when v is unknown or the download fails (offline, no go command).
func fetchToolchain(v string) string {
	if v == "" || !versionPath.MatchString(v) {
		return ""
	}
	e, _ := fetches.LoadOrStore(v, &toolchainFetch{})
	tf := e.(*toolchainFetch)
	tf.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", toolchainModule+"@"+toolchainVersion(v))
		cmd.Dir = os.TempDir()
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
		out, err := cmd.Output()
		if err != nil {
			return
		}
		var got struct{ Dir string }
		if json.Unmarshal(out, &got) == nil && isDirPath(got.Dir) {
			tf.dir = got.Dir
		}
	})
	return tf.dir
}

// declsHoldFrames reports whether each frame (at least one) lies inside a
// declaration of its function in the file at path.
func declsHoldFrames(path string, frames []Frame) bool {
	if len(frames) == 0 {
		return false
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return false
	}
	spans := map[string][][2]int{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		k := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			k = gosym.BaseTypeName(fd.Recv.List[0].Type) + "." + k
		}
		spans[k] = append(spans[k], [2]int{fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line})
	}
	for _, fr := range frames {
		if !inDecl(spans, declKey(fr.Function), fr.Line) {
			return false
		}
	}
	return true
}

// inDecl reports whether line is inside a declaration named key.
func inDecl(spans map[string][][2]int, key string, line int) bool {
	for _, s := range spans[key] {
		if line >= s[0] && line <= s[1] {
			return true
		}
	}
	return false
}

// declKey is the name a function's declaration has in its package's
// source: T.M for a method (closures belong to it), else F.
func declKey(fn string) string {
	_, recv, _, name := splitFunc(fn)
	if recv != "" {
		return recv + "." + name
	}
	return name
}

// libSource reads the declarations of library packages (a leaked
// object's constructor, its type and the methods of that type) from
// their source at the paths the frames name, where that source is known
// to be what was built: a module cache directory is named by its
// module's version and never changes (go.sum checks it), and a Go root
// is taken only when its VERSION is the target's Go version, or, when
// that version is unknown (dumps alone), when every frame of the bundle
// in the file lies inside a declaration of its function there. The user's
// own code is never read from disk (it comes from the bundle's
// snapshot).
type libSource struct {
	goVersion string
	pkgs      map[string]*libPkg // by directory; nil: not readable
	// frames are the bundle's frames by file, for a Go root file when
	// the target's Go version is unknown (see matchesFrames); matched
	// memoises that check by file.
	frames  map[string][]Frame
	matched map[string]bool
}

// libPkg is the declarations of one library package.
type libPkg struct {
	dir     string
	funcs   map[string]*ast.FuncDecl // top-level functions by name
	types   map[string]ast.Expr      // type declarations by name
	methods map[string][]string      // method names by receiver type name
	// decls are every function and method by declKey, with its body.
	decls map[string]*ast.FuncDecl
	// namedBy maps a name to the declarations whose bodies name it (see
	// reachers), made on first use.
	namedBy map[string][]string
	// vars are the package-level variable declarations.
	vars []*ast.ValueSpec
}

// splitFunc splits a function symbol into its package path, receiver
// type name (without type arguments; "" for a function), whether the
// receiver is a pointer, and the function or method name (closures
// ".func1" keep the name of the function they are in).
func splitFunc(fn string) (pkg, recv string, ptr bool, name string) {
	fn = gosym.ElideTypeArgs(fn)
	pkg = flame.PackageOf(fn)
	if len(fn) <= len(pkg)+1 {
		return pkg, "", false, ""
	}
	rest := strings.ReplaceAll(fn[len(pkg)+1:], "[...]", "")
	parts := strings.Split(rest, ".")
	if strings.HasPrefix(parts[0], "(*") && len(parts) > 1 {
		return pkg, strings.TrimSuffix(strings.TrimPrefix(parts[0], "(*"), ")"), true, parts[1]
	}
	if len(parts) > 1 && !gosym.Numbered(parts[1]) {
		return pkg, parts[0], false, parts[1]
	}
	return pkg, "", false, parts[0]
}
