package srclines

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// Bounds of the call index of one Snapshotter.
const (
	// maxIndexFiles bounds the files indexed.
	maxIndexFiles = 5000
	// maxIndexText bounds the bytes of source read for the index.
	maxIndexText = 64 << 20
	// maxModuleUp bounds how far up from a main package its go.mod is
	// looked for.
	maxModuleUp = 12
	// maxIndexDirs bounds the directories of a module walked.
	maxIndexDirs = 20000
)

// module is the Go module holding a program's main package: its root as
// the frames name it and as it was read, and its module path.
type module struct {
	named, read, path string
}

// callIndex is what a Snapshotter has indexed of the program's calls.
type callIndex struct {
	done      map[string]bool // module paths indexed
	truncated map[string]bool // module paths whose index hit the bounds
	files     int
	text      int64
}

// indexCalls emits the source_calls rows of each module holding the
// program's own code (the directories the frames name outside the Go
// root, the module cache and vendor) that neither the bundle in dir nor
// an earlier call indexed: those directories, with the test files of the
// one a test binary tests, and every other package of the module but a
// main one.
func (s *Snapshotter) indexCalls(dir string, frames []bundle.StackFrame, emit func(schema.SourceCall) error) error {
	if s.calls.done == nil {
		done, err := indexedModules(dir)
		if err != nil {
			return err
		}
		s.calls.done, s.calls.truncated = done, map[string]bool{}
	}
	test := isTestBinary(frames)
	for _, m := range s.programModules(frames) {
		s.calls.done[m.path] = true
		dirs, complete := packageDirs(m.read, m.own)
		for _, dir := range dirs {
			if err := s.indexPackage(emit, m.module, dir, test, m.tested[dir]); err != nil {
				return err
			}
		}
		if !complete {
			if err := s.truncate(emit, m.module); err != nil {
				return err
			}
		}
	}
	return nil
}

// ownModule is a module not yet indexed, the directories of it (as read)
// that the frames name, and those of them a frame of a test file is in.
type ownModule struct {
	module
	own    []string
	tested map[string]bool
}

// programModules groups the program's own directories the frames name,
// in order, by the module holding them, leaving out modules indexed
// already and directories in no module.
func (s *Snapshotter) programModules(frames []bundle.StackFrame) []*ownModule {
	tested := map[string]bool{}
	for _, f := range frames {
		if strings.HasSuffix(f.File, "_test.go") {
			tested[filepath.Dir(f.File)] = true
		}
	}
	byPath := map[string]*ownModule{}
	var out []*ownModule
	for _, named := range s.programDirs(frames) {
		read := s.readDir(named)
		if read == "" {
			continue
		}
		mod, ok := findModule(named, read)
		if !ok || s.calls.done[mod.path] {
			continue
		}
		m := byPath[mod.path]
		if m == nil {
			m = &ownModule{module: mod, tested: map[string]bool{}}
			byPath[mod.path] = m
			out = append(out, m)
		}
		m.own = append(m.own, read)
		m.tested[read] = tested[named]
	}
	return out
}

// readDir is where the directory of a program file was read from (""
// when none of its files was).
func (s *Snapshotter) readDir(named string) string {
	for p, f := range s.files {
		if filepath.Dir(p) == named && f.read != "" {
			return filepath.Dir(f.read)
		}
	}
	return ""
}

// findModule walks up from a package's directory, as named and as read,
// to the first go.mod that names a module.
func findModule(named, read string) (module, bool) {
	for i := 0; i < maxModuleUp; i++ {
		if data, err := readBounded(filepath.Join(read, "go.mod")); err == nil {
			if p := modfile.ModulePath(data); p != "" {
				return module{named: named, read: read, path: p}, true
			}
			return module{}, false
		}
		up, nup := filepath.Dir(read), filepath.Dir(named)
		if up == read || nup == named {
			break
		}
		read, named = up, nup
	}
	return module{}, false
}

// packageDirs lists the directories of a module's packages to index:
// own, the program's directories, then every other directory of the
// module (not a nested module's, vendor, testdata, node_modules, or
// hidden) whose package is not main — another program's main package is
// not linked into this one. It reports false when it stopped at
// maxIndexDirs directories.
func packageDirs(root string, own []string) ([]string, bool) {
	out := slices.Clone(own)
	seen := 0
	complete := true
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if seen++; seen > maxIndexDirs {
			complete = false
			return filepath.SkipAll
		}
		if p != root && skippedDir(p, d.Name()) {
			return filepath.SkipDir
		}
		if name := packageName(p); !slices.Contains(own, p) && name != "" && name != "main" {
			out = append(out, p)
		}
		return nil
	})
	return out, complete
}

// skippedDir reports a directory the module's packages are never in.
func skippedDir(p, name string) bool {
	switch {
	case name == "vendor", name == "testdata", name == "node_modules":
		return true
	case strings.HasPrefix(name, "."), strings.HasPrefix(name, "_"):
		return true
	}
	return exists(filepath.Join(p, "go.mod"))
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// indexedModules returns the module paths the bundle's source_calls
// table has indexed files of.
func indexedModules(dir string) (map[string]bool, error) {
	done := map[string]bool{}
	b := &bundle.Bundle{Dir: dir}
	err := b.ReadTable(schema.TableSourceCalls, memory.DefaultAllocator, func(rec arrow.Record) error {
		callees := bundle.NewStrings(rec.Column(rec.Schema().FieldIndices(schema.ColCallee)[0]))
		kinds := bundle.NewStrings(rec.Column(rec.Schema().FieldIndices(schema.ColKind)[0]))
		for i := 0; i < int(rec.NumRows()); i++ {
			if kinds.Value(i) == schema.CallKindFile {
				done[callees.Value(i)] = true
			}
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read %s: %w", schema.TableSourceCalls, err)
	}
	return done, nil
}
