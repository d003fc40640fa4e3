package gosrc

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"golang.org/x/mod/module"
)

// Bounds on what is read of one library package.
const (
	maxLibFiles = 1000    // files of one directory
	maxLibFile  = 4 << 20 // bytes of one file
	maxLibDir   = 32 << 20
)

// Libraries finds the source of the packages a program imports: the
// standard library in a Go root, modules in a module cache. The caller
// vouches that both hold what the target was built from (the Go root of
// its version; a module cache directory is named by its version and
// never changes). It is safe for concurrent use and caches what it
// reads.
type Libraries struct {
	// GoRoot is a Go root whose src is the target's standard library
	// ("" for none), GoVersion its version ("go1.27.3"; "" unknown).
	GoRoot, GoVersion string
	// APIRoot is a Go root read for the standard library's declarations
	// when GoRoot is not known (this machine's: the API of sync, time
	// or context a program uses is the same in every version); its
	// bodies are never read.
	APIRoot string
	// ModCache is the module cache ("" for none) and Modules the
	// version of each module the program was built with.
	ModCache string
	Modules  map[string]string

	mu    sync.Mutex
	dirs  map[string][]File
	bytes int64
}

// maxLibCache bounds the bytes of source Libraries keeps read.
const maxLibCache = 256 << 20

// isStd reports an import path of the standard library (no dot in its
// first element).
func (l *Libraries) isStd(ip string) bool {
	first, _, _ := strings.Cut(ip, "/")
	return !strings.Contains(first, ".")
}

// dirOf is the directory holding package ip as imported from srcDir, ""
// when none is known. An import path is the program's text, so outside
// input: one that is not a valid path ("a/../../x") names no directory.
func (l *Libraries) dirOf(ip, srcDir string) string {
	if l == nil || module.CheckImportPath(ip) != nil {
		return ""
	}
	for _, root := range []string{l.GoRoot, l.APIRoot} {
		if root == "" {
			continue
		}
		src := filepath.Join(root, "src")
		if srcDir != "" && strings.HasPrefix(srcDir, src+string(filepath.Separator)) {
			if d := filepath.Join(src, "vendor", filepath.FromSlash(ip)); isDir(d) {
				return d
			}
		}
		if l.isStd(ip) {
			if d := filepath.Join(src, filepath.FromSlash(ip)); isDir(d) {
				return d
			}
			return ""
		}
	}
	mod, ver := l.moduleOf(ip)
	if mod == "" || l.ModCache == "" {
		return ""
	}
	esc, err := module.EscapePath(mod)
	if err != nil {
		return ""
	}
	escVer, err := module.EscapeVersion(ver)
	if err != nil {
		return ""
	}
	d := filepath.Join(l.ModCache, filepath.FromSlash(esc)+"@"+escVer, filepath.FromSlash(strings.TrimPrefix(ip[len(mod):], "/")))
	if isDir(d) {
		return d
	}
	return ""
}

// moduleOf returns the module (the longest of Modules' paths) that
// holds package ip, and its version.
func (l *Libraries) moduleOf(ip string) (string, string) {
	best := ""
	for m := range l.Modules {
		if (ip == m || strings.HasPrefix(ip, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	if best == "" {
		return "", ""
	}
	return best, l.Modules[best]
}

// importPathOf is the import path of a library directory (in the Go root
// or the module cache), "" when it is in neither.
func (l *Libraries) importPathOf(dir string) string {
	if l == nil {
		return ""
	}
	dir = filepath.Clean(dir)
	if l.GoRoot != "" {
		src := filepath.Join(l.GoRoot, "src") + string(filepath.Separator)
		if rel, ok := strings.CutPrefix(dir, src); ok {
			rel = filepath.ToSlash(rel)
			return strings.TrimPrefix(rel, "vendor/")
		}
	}
	if l.ModCache == "" {
		return ""
	}
	rel, ok := strings.CutPrefix(dir, filepath.Clean(l.ModCache)+string(filepath.Separator))
	if !ok {
		return ""
	}
	return ModuleImportPath(filepath.ToSlash(rel))
}

// ModuleImportPath turns a path under the module cache
// ("k8s.io/client-!go@v0.29.0/util/workqueue") into its import path
// (k8s.io/client-go/util/workqueue); "" when it names no module version.
func ModuleImportPath(rel string) string {
	at := strings.Index(rel, "@")
	if at < 0 {
		return ""
	}
	mod, err := module.UnescapePath(rel[:at])
	if err != nil {
		return ""
	}
	rest := rel[at:]
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return mod + rest[i:]
	}
	return mod
}

// read returns the non-test Go files of a library directory, read once.
func (l *Libraries) read(dir string) []File {
	l.mu.Lock()
	defer l.mu.Unlock()
	if fs, ok := l.dirs[dir]; ok {
		return fs
	}
	fs, n := readDir(dir)
	if l.dirs == nil {
		l.dirs = map[string][]File{}
	}
	if l.bytes+n <= maxLibCache {
		l.dirs[dir] = fs
		l.bytes += n
	}
	return fs
}

// readDir reads a directory's non-test Go files within the bounds, and
// how many bytes they hold.
func readDir(dir string) ([]File, int64) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0
	}
	var out []File
	var total int64
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || len(out) >= maxLibFiles {
			continue
		}
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxLibFile || total+fi.Size() > maxLibDir {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		total += int64(len(b))
		out = append(out, File{Path: filepath.Join(dir, name), Text: b})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, total
}

func isDir(d string) bool {
	fi, err := os.Stat(d)
	return err == nil && fi.IsDir()
}
