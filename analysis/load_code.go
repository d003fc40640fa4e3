package analysis

import (
	"os"
	"path"
	"sort"
	"strings"

	"github.com/leakscope/leakscope/analysis/flame"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// UserCodeEnv names the environment variable listing extra prefixes of
// code the user owns (comma-separated), for monorepos whose own packages
// live in several modules. See [Options.UserCode].
const UserCodeEnv = "LEAKSCOPE_USER_CODE"

// Owners.
const (
	OwnerUnknown Owner = iota
	OwnerUser
	OwnerStd
	OwnerDependency
)

// String names an owner as reports print it.
func (o Owner) String() string {
	switch o {
	case OwnerUser:
		return "user"
	case OwnerStd:
		return "std"
	case OwnerDependency:
		return "dependency"
	}
	return "unknown"
}

// codeOf is the classification of one frame: its owner and, for a
// dependency, its module path (or package path when the module is not
// known).
type codeOf struct {
	owner  Owner
	module string
}

// codeIndex decides whose code a frame is. It is the one place that
// decides it; every view asks it through [Frame] (classified when stacks
// are loaded) or [codeIndex.of].
//
// In order: the user's own prefixes; build info from the manifest (main
// module and dependency module paths, matched against the function's
// package path); the frame's file (under the GOROOT src directory learned
// from runtime frames: standard library; in the module cache or a vendor
// directory: a dependency; any other absolute path: the user's); and only
// when neither build info nor a file tells, the standard library's
// top-level package names. Whether an import path has a dot decides
// nothing: a module named "operator" is the user's.
type codeIndex struct {
	user   []string // import-path prefixes, or file-path prefixes (starting with "/")
	main   string   // main module path from build info
	deps   []string // dependency module paths, longest first
	goroot []string // learned GOROOT/src/ prefixes
}

// newCodeIndex builds the index from the bundle's target, the user's own
// prefixes and the files of every frame (to learn GOROOT).
func newCodeIndex(t bundle.Target, user []string, frames map[int64]Frame) *codeIndex {
	c := &codeIndex{main: t.ModulePath}
	for _, p := range user {
		if p = strings.TrimSpace(p); p != "" {
			c.user = append(c.user, p)
		}
	}
	for _, d := range t.Deps {
		switch {
		case d.Path == "":
		case strings.HasPrefix(d.Replace, ".") || strings.HasPrefix(d.Replace, "/"):
			// Replaced by a local directory: a module of the user's own
			// checkout (a monorepo sibling).
			c.user = append(c.user, d.Path)
		default:
			c.deps = append(c.deps, d.Path)
		}
	}
	sort.Slice(c.deps, func(i, j int) bool { return len(c.deps[i]) > len(c.deps[j]) })
	seen := map[string]bool{}
	for _, f := range frames {
		if r := gorootSrc(f); r != "" && !seen[r] {
			seen[r] = true
			c.goroot = append(c.goroot, r)
		}
	}
	sort.Strings(c.goroot)
	return c
}

// userCodePrefixes returns opts' prefixes, or those of $LEAKSCOPE_USER_CODE.
func userCodePrefixes(opts []string) []string {
	if len(opts) > 0 {
		return opts
	}
	if v := os.Getenv(UserCodeEnv); v != "" {
		return strings.Split(v, ",")
	}
	return nil
}

// gorootSrc returns the GOROOT/src/ prefix a runtime frame's file shows
// ("/usr/local/go/src/"), or "".
func gorootSrc(f Frame) string {
	if !strings.HasPrefix(f.Function, "runtime.") {
		return ""
	}
	dir := path.Dir(f.File)
	if !strings.HasSuffix(dir, "/src/runtime") {
		return ""
	}
	return dir[:len(dir)-len("runtime")]
}

// of classifies a frame.
func (c *codeIndex) of(fn, file string) codeOf {
	pkg := flame.PackageOf(fn)
	for _, p := range c.user {
		if strings.HasPrefix(p, "/") && strings.HasPrefix(file, p) || !strings.HasPrefix(p, "/") && underPath(pkg, strings.TrimSuffix(p, "/")) {
			return codeOf{owner: OwnerUser}
		}
	}
	if pkg == "main" {
		return codeOf{owner: OwnerUser}
	}
	// The longest module path holding the package decides (a nested
	// module is its own).
	for _, d := range c.deps {
		if len(d) < len(c.main) {
			break
		}
		if underPath(pkg, d) {
			return codeOf{owner: OwnerDependency, module: d}
		}
	}
	if underPath(pkg, c.main) {
		return codeOf{owner: OwnerUser}
	}
	for _, d := range c.deps {
		if underPath(pkg, d) {
			return codeOf{owner: OwnerDependency, module: d}
		}
	}
	for _, r := range c.goroot {
		if strings.HasPrefix(file, r) {
			return codeOf{owner: OwnerStd}
		}
	}
	if m, ok := moduleCacheModule(file); ok {
		if m == "golang.org/toolchain" { // a GOTOOLCHAIN download: its src is GOROOT
			return codeOf{owner: OwnerStd}
		}
		return codeOf{owner: OwnerDependency, module: m}
	}
	if i := strings.Index(file, "/vendor/"); i >= 0 {
		return codeOf{owner: OwnerDependency, module: pkg}
	}
	if len(c.goroot) > 0 && strings.HasPrefix(file, "/") {
		// GOROOT is known and this file is neither in it nor in a module
		// cache or vendor directory: the user's checkout.
		return codeOf{owner: OwnerUser}
	}
	if stdRoot(pkg) {
		return codeOf{owner: OwnerStd}
	}
	return codeOf{owner: OwnerUser}
}

// classify sets the owner of every frame.
func (c *codeIndex) classify(frames map[int64]Frame) {
	for id, f := range frames {
		k := c.of(f.Function, f.File)
		f.owner, f.module = k.owner, k.module
		frames[id] = f
	}
}

// frameCode returns a frame's classification, computing it with an index
// that knows no build info when the frame was made outside loadStacks.
func frameCode(f Frame) codeOf {
	if f.owner != OwnerUnknown {
		return codeOf{owner: f.owner, module: f.module}
	}
	return (&codeIndex{}).of(f.Function, f.File)
}

// underPath reports whether package pkg is module (or path prefix) mod or
// inside it.
func underPath(pkg, mod string) bool {
	return mod != "" && (pkg == mod || strings.HasPrefix(pkg, mod+"/"))
}

// moduleCacheModule returns the module path of a file in a module cache
// (".../pkg/mod/k8s.io/client-go@v0.37.2/...", or with -trimpath
// "k8s.io/client-go@v0.37.2/..."), decoding the cache's "!x" for "X".
func moduleCacheModule(file string) (string, bool) {
	rest := file
	if i := strings.LastIndex(file, "/pkg/mod/"); i >= 0 {
		rest = file[i+len("/pkg/mod/"):]
	} else if strings.HasPrefix(file, "/") {
		return "", false
	}
	at := strings.Index(rest, "@")
	if at <= 0 || strings.Contains(rest[:at], "@") {
		return "", false
	}
	if slash := strings.IndexByte(rest[at:], '/'); slash < 0 {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < at; i++ {
		if rest[i] == '!' && i+1 < at {
			i++
			b.WriteByte(rest[i] - 'a' + 'A')
			continue
		}
		b.WriteByte(rest[i])
	}
	return b.String(), true
}

// stdRoots are the first elements of the standard library's import paths
// (`go list std`; TestStdRoots checks the list against the toolchain).
// They decide only for frames neither build info nor a file classifies.
var stdRoots = map[string]bool{
	"archive": true, "bufio": true, "bytes": true, "cmp": true, "compress": true, "container": true,
	"context": true, "crypto": true, "database": true, "debug": true, "embed": true, "encoding": true,
	"errors": true, "expvar": true, "flag": true, "fmt": true, "go": true, "hash": true, "html": true,
	"image": true, "index": true, "internal": true, "io": true, "iter": true, "log": true, "maps": true,
	"math": true, "mime": true, "net": true, "os": true, "path": true, "plugin": true, "reflect": true,
	"regexp": true, "runtime": true, "slices": true, "sort": true, "strconv": true, "strings": true,
	"structs": true, "sync": true, "syscall": true, "testing": true, "text": true, "time": true,
	"unicode": true, "unique": true, "unsafe": true, "vendor": true, "weak": true,
}

// stdRoot reports whether pkg's first path element is a standard library
// root.
func stdRoot(pkg string) bool {
	first, _, _ := strings.Cut(pkg, "/")
	return stdRoots[first]
}

// isStd reports whether a frame is in the standard library.
func isStd(f Frame) bool { return frameCode(f).owner == OwnerStd }

// isUser reports whether a frame is in code the user owns.
func isUser(f Frame) bool { return frameCode(f).owner == OwnerUser }

// userFrame returns the first frame of the user's own code, leaf first,
// and its index, or -1.
func userFrame(frames []Frame) (Frame, int) {
	for i, f := range frames {
		if isUser(f) {
			return f, i
		}
	}
	return Frame{}, -1
}
