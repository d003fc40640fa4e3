package srclines

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// Bounds of the files kept by one Snapshotter.
const (
	maxKeepFiles = 5000
	maxKeepText  = 64 << 20
)

// kept is what a Snapshotter has kept of the program's files.
type kept struct {
	dirs  map[string]bool // directories (as named) done
	files int
	text  int64
}

// keepFiles emits a source_files row for every Go file of the program's
// own packages the bundle does not hold yet: each directory the frames
// name outside the Go root and the module cache (with its _test.go files
// when the program is a test binary), and every other package directory
// of its module with the module's go.mod, within the bounds.
func (s *Snapshotter) keepFiles(dir string, frames []bundle.StackFrame, emit func(schema.SourceFile) error) error {
	if s.kept.dirs == nil {
		done, err := keptDirs(dir)
		if err != nil {
			return err
		}
		s.kept.dirs = done
	}
	test := isTestBinary(frames)
	for _, named := range s.programDirs(frames) {
		read := s.readDir(named)
		if read == "" || s.kept.dirs[named] {
			continue
		}
		mod, inModule := findModule(named, read)
		ip := filepath.Base(named)
		if inModule {
			ip = importPath(mod, read)
		}
		if err := s.keepDir(emit, named, read, ip, test); err != nil {
			return err
		}
		if inModule {
			if err := s.keepModule(emit, mod, read); err != nil {
				return err
			}
		}
	}
	return nil
}

// keepModule keeps the module's go.mod and the non-test files of its
// other package directories.
func (s *Snapshotter) keepModule(emit func(schema.SourceFile) error, mod module, mainDir string) error {
	if modDir := mod.named; !s.kept.dirs[modDir+"/go.mod"] {
		s.kept.dirs[modDir+"/go.mod"] = true
		if err := s.keepFile(emit, filepath.Join(mod.named, "go.mod"), filepath.Join(mod.read, "go.mod"), ""); err != nil {
			return err
		}
	}
	dirs, _ := packageDirs(mod.read, []string{mainDir})
	for _, d := range dirs {
		rel, err := filepath.Rel(mod.read, d)
		if err != nil {
			continue
		}
		named := filepath.Join(mod.named, rel)
		if s.kept.dirs[named] {
			continue
		}
		if err := s.keepDir(emit, named, d, importPath(mod, d), false); err != nil {
			return err
		}
	}
	return nil
}

// keepDir keeps the Go files of one directory (test files too when
// test), named as the frames name the directory.
func (s *Snapshotter) keepDir(emit func(schema.SourceFile) error, named, read, ip string, test bool) error {
	s.kept.dirs[named] = true
	files := goFiles(read)
	if test {
		files = append(files, testFiles(read)...)
		sort.Strings(files)
	}
	for _, p := range files {
		if err := s.keepFile(emit, filepath.Join(named, filepath.Base(p)), p, ip); err != nil {
			return err
		}
	}
	return nil
}

// keepFile emits one file's row, within the bounds.
func (s *Snapshotter) keepFile(emit func(schema.SourceFile) error, named, read, ip string) error {
	if s.kept.files >= maxKeepFiles || s.kept.text >= maxKeepText {
		return nil
	}
	data, err := readBounded(read)
	if err != nil {
		return nil
	}
	s.kept.files++
	s.kept.text += int64(len(data))
	sum := sha256.Sum256(data)
	return emit(schema.SourceFile{File: named, Package: ip, Text: string(data), FileSHA256: hex.EncodeToString(sum[:]), Source: s.opts.Source})
}

// importPath is the import path of a directory of a module.
func importPath(mod module, dir string) string {
	rel, err := filepath.Rel(mod.read, dir)
	if err != nil || rel == "." {
		return mod.path
	}
	return path.Join(mod.path, filepath.ToSlash(rel))
}

// programDirs lists, sorted, the directories (as named) of the frames in
// the program's own code: outside the Go root, the module cache and
// vendor directories.
func (s *Snapshotter) programDirs(frames []bundle.StackFrame) []string {
	roots := goRoots(frames)
	seen := map[string]bool{}
	var out []string
	for _, f := range frames {
		if !strings.HasSuffix(f.File, ".go") || underAny(f.File, roots) || trimmedStd(f.File) || isDependency(f.File) ||
			strings.HasSuffix(f.File, "_testmain.go") {
			continue
		}
		if d := filepath.Dir(f.File); !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// isTestBinary reports frames of a test binary: a test file's, or the
// testing package's.
func isTestBinary(frames []bundle.StackFrame) bool {
	for _, f := range frames {
		if strings.HasSuffix(f.File, "_test.go") || strings.HasPrefix(f.Function, "testing.") {
			return true
		}
	}
	return false
}

// testFiles lists, sorted, the _test.go files of a directory.
func testFiles(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); e.Type().IsRegular() && strings.HasSuffix(n, "_test.go") {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out
}

// keptDirs returns the directories (and go.mod files) the bundle's
// source_files table holds files of.
func keptDirs(dir string) (map[string]bool, error) {
	done := map[string]bool{}
	b := &bundle.Bundle{Dir: dir}
	err := b.ReadTable(schema.TableSourceFiles, memory.DefaultAllocator, func(rec arrow.Record) error {
		files := bundle.NewStrings(rec.Column(rec.Schema().FieldIndices(schema.ColFile)[0]))
		for i := 0; i < int(rec.NumRows()); i++ {
			f := files.Value(i)
			if filepath.Base(f) == "go.mod" {
				done[filepath.Dir(f)+"/go.mod"] = true
				continue
			}
			done[filepath.Dir(f)] = true
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read %s: %w", schema.TableSourceFiles, err)
	}
	return done, nil
}
