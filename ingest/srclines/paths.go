package srclines

import (
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// Candidates lists where the file a frame names may be read, in order:
// under each of opts.Roots (a target's /proc/PID/root); for a module path
// with a version (a -trimpath build's github.com/x/y@v1.2.3/pkg/f.go, or
// a module cache path …/pkg/mod/github.com/x/y@v1.2.3/pkg/f.go) that
// module directory under each source root and the module cache, and
// the file at its path inside the module under each source root (a
// checkout of the module); the recorded path itself; then, under each
// source root, the recorded path less 1, 2, … of its leading elements,
// longest first (a -trimpath main module's example.com/svc/cmd/x.go, a
// container's /app/cmd/x.go, another machine's checkout, all found in a
// checkout at DIR/cmd/x.go). A wrong file of the same name is caught
// after reading: it has no declaration of the function (status
// changed).
func Candidates(path string, opts Options) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, r := range opts.Roots {
		add(filepath.Join(r, path))
	}
	if mod, ver, rest, ok := modVersion(path); ok {
		for _, r := range append(append([]string(nil), opts.SourceRoots...), opts.ModCache) {
			if r == "" {
				continue
			}
			add(filepath.Join(r, filepath.FromSlash(escapeModule(mod)+"@"+ver), filepath.FromSlash(rest)))
			add(filepath.Join(r, filepath.FromSlash(mod+"@"+ver), filepath.FromSlash(rest)))
		}
		for _, r := range opts.SourceRoots {
			add(filepath.Join(r, filepath.FromSlash(rest)))
		}
	}
	add(path)
	elems := strings.Split(strings.TrimPrefix(filepath.ToSlash(path), "/"), "/")
	for _, r := range opts.SourceRoots {
		for k := range elems {
			add(filepath.Join(r, filepath.FromSlash(strings.Join(elems[k:], "/"))))
		}
	}
	return out
}

// modVersion splits a path holding a module version into the module
// path, the version and the file's path inside the module: after the
// module cache's /pkg/mod/ when there is one, else from the start (a
// -trimpath path).
func modVersion(path string) (mod, ver, rest string, ok bool) {
	p := filepath.ToSlash(path)
	if i := strings.LastIndex(p, "/pkg/mod/"); i >= 0 {
		p = p[i+len("/pkg/mod/"):]
	} else if strings.HasPrefix(p, "/") {
		return "", "", "", false
	}
	at := strings.Index(p, "@")
	if at <= 0 {
		return "", "", "", false
	}
	slash := strings.Index(p[at:], "/")
	if slash < 0 {
		return "", "", "", false
	}
	mod, ver, rest = unescapeModule(p[:at]), p[at+1:at+slash], p[at+slash+1:]
	if ver == "" || rest == "" || strings.HasPrefix(mod, "cache/") {
		return "", "", "", false
	}
	return mod, ver, rest, true
}

// escapeModule writes a module path as the module cache names it: each
// upper-case letter as ! and its lower case (golang.org/x/mod/module's
// EscapePath, for the paths Go accepts).
func escapeModule(mod string) string {
	var b strings.Builder
	for _, r := range mod {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// unescapeModule undoes escapeModule (a module cache path's !x is X).
func unescapeModule(p string) string {
	if !strings.Contains(p, "!") {
		return p
	}
	var b strings.Builder
	up := false
	for _, r := range p {
		if r == '!' {
			up = true
			continue
		}
		if up {
			r, up = unicode.ToUpper(r), false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// DefaultModCache returns the module cache Go uses on this machine:
// $GOMODCACHE, else the first $GOPATH's pkg/mod, else ~/go/pkg/mod; ""
// when none of them is a directory.
func DefaultModCache() string {
	dir := os.Getenv("GOMODCACHE")
	if dir == "" {
		if gp := filepath.SplitList(os.Getenv("GOPATH")); len(gp) > 0 && gp[0] != "" {
			dir = filepath.Join(gp[0], "pkg", "mod")
		} else if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, "go", "pkg", "mod")
		}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return ""
	}
	return dir
}
