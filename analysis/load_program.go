package analysis

import (
	"fmt"
	"go/build"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"

	"github.com/leakscope/leakscope/analysis/internal/gosrc"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// programSource is what the bundle and this machine hold of the program
// as Go: the bundle's whole files of the program's packages and the
// library source the frames run in, read with types on first use.
type programSource struct {
	files []gosrc.File
	libs  *gosrc.Libraries
	// bodies are the library directories the frames run in.
	bodies []string
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
	err := b.ReadTable(schema.TableSourceFiles, mem, func(rec arrow.Record) error {
		k := cols{rec}
		file, pkg, text := k.str(schema.ColFile), k.str(schema.ColPackage), k.str(schema.ColText)
		for r := 0; r < int(rec.NumRows()); r++ {
			out = append(out, gosrc.File{Path: strings.Clone(file(r)), Package: strings.Clone(pkg(r)), Text: []byte(text(r))})
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read %s: %w", schema.TableSourceFiles, err)
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
	dirs := map[string]bool{}
	for _, f := range frames {
		p := ps.diskPath(f.File)
		if mod, ver, ok := moduleOfPath(p); ok {
			ps.libs.Modules[mod] = ver
		}
		if ps.root[1] != "" && strings.HasPrefix(p, ps.root[1]+"/src/") || isModCache(p) {
			if d := filepath.Dir(p); !dirs[d] && !gosrcMachinery(f.Function) {
				dirs[d] = true
				ps.bodies = append(ps.bodies, d)
			}
		}
	}
	return ps
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
	defer func() {
		if r := recover(); r != nil {
			ps.prog, ps.err = nil, fmt.Sprintf("reading the program as Go failed: %v\n%s", r, debug.Stack())
		}
	}()
	ps.prog = gosrc.Load(gosrc.Config{Files: ps.files, Libraries: ps.libs, Bodies: ps.bodies})
	return ps.prog
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
// rather than reads: the runtime, sync, internal packages.
func gosrcMachinery(fn string) bool {
	for _, p := range []string{"runtime.", "runtime/", "internal/", "sync.", "sync/", "syscall.", "reflect.", "time.", "unsafe."} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// goRootFor returns the Go root the frames name and the one to read for
// it: the same when it is here and is the target's version (or, the
// version unknown, its files hold the frames' lines), a toolchain in the
// module cache (named by its version, never changed), or this machine's
// own when its version is the target's. Empty when none can be trusted.
func goRootFor(frames []Frame, goVersion string) [2]string {
	named := ""
	for _, f := range frames {
		if i := strings.Index(f.File, "/src/runtime/"); i >= 0 && strings.HasPrefix(f.Function, "runtime.") {
			named = f.File[:i]
			break
		}
	}
	if named == "" {
		return [2]string{}
	}
	if isModCache(named) && isDirPath(named) {
		return [2]string{named, named}
	}
	local := build.Default.GOROOT
	if v := rootVersion(named); v != "" && (goVersion == "" || v == goVersion) && rootHoldsFrames(named, frames) {
		return [2]string{named, named}
	}
	if goVersion != "" && rootVersion(local) == goVersion {
		return [2]string{named, local}
	}
	if goVersion == "" && named == local && rootHoldsFrames(local, frames) {
		return [2]string{named, local}
	}
	return [2]string{}
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

// rootHoldsFrames reports whether every frame in a Go root's files lies
// inside a declaration of its function there (up to a few files).
func rootHoldsFrames(root string, frames []Frame) bool {
	byFile := map[string][]Frame{}
	for _, f := range frames {
		if strings.HasPrefix(f.File, root+"/src/") {
			byFile[f.File] = append(byFile[f.File], f)
		}
	}
	n := 0
	for file, fs := range byFile {
		if n++; n > 8 {
			break
		}
		if !declsHoldFrames(file, fs) {
			return false
		}
	}
	return n > 0
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
