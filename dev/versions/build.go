package versions

import (
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// Mode is how a binary is built: the forms Go services ship in.
type Mode string

// The build modes of the matrix.
const (
	Plain    Mode = "plain"    // go build: symbols and DWARF
	Stripped Mode = "stripped" // -ldflags='-s -w': no .symtab, no DWARF
	PIE      Mode = "pie"      // -buildmode=pie: position-independent
)

// Modes lists every build mode.
var Modes = []Mode{Plain, Stripped, PIE}

// flags are the go build flags of m.
func (m Mode) flags() ([]string, error) {
	switch m {
	case Plain:
		return nil, nil
	case Stripped:
		return []string{"-ldflags=-s -w"}, nil
	case PIE:
		return []string{"-buildmode=pie"}, nil
	}
	return nil, fmt.Errorf("unknown build mode %q", m)
}

// Spec says what to build.
type Spec struct {
	// Dir is the main package, the root of a module of its own whose go
	// line every toolchain of interest accepts.
	Dir string
	// Toolchain is the exact release, e.g. "go1.22.12".
	Toolchain string
	Mode      Mode
	// Experiment is the GOEXPERIMENT value; "" builds without one.
	Experiment string
	// Arch is GOARCH; "" builds for this process's architecture.
	Arch string
}

// arch is the GOARCH s builds for.
func (s Spec) arch() string {
	if s.Arch != "" {
		return s.Arch
	}
	return runtime.GOARCH
}

// CacheDir is where built binaries are kept between runs:
// $LEAKSCOPE_BUILD_CACHE, else leakscope-builds under the temporary
// directory.
func CacheDir() string {
	if d := os.Getenv("LEAKSCOPE_BUILD_CACHE"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "leakscope-builds")
}

// Build compiles s with cgo off, for this process's GOOS and s.Arch, and
// returns the binary's path. Binaries are cached in [CacheDir] under a key
// of the toolchain, mode, experiment, platform, source directory and the
// content of every file in it, so a second run with unchanged sources
// builds nothing. Concurrent builds of the same key (in this or another
// process) are safe: the first to finish wins. The result is checked to
// be built by s.Toolchain.
func Build(ctx context.Context, s Spec) (string, error) {
	flags, err := s.Mode.flags()
	if err != nil {
		return "", err
	}
	dir, err := filepath.Abs(s.Dir)
	if err != nil {
		return "", fmt.Errorf("build %s: %w", s.Dir, err)
	}
	key, err := cacheKey(dir, s)
	if err != nil {
		return "", fmt.Errorf("build %s: %w", s.Dir, err)
	}
	name := filepath.Base(dir)
	final := filepath.Join(CacheDir(), fmt.Sprintf("%s-%s-%s-%s-%s", name, s.Toolchain, s.arch(), s.Mode, key[:16]))
	bin := filepath.Join(final, name)
	if err := checkBinary(bin, s.Toolchain); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(CacheDir(), 0o755); err != nil {
		return "", fmt.Errorf("build cache: %w", err)
	}
	unlock, err := lockFile(final + ".lock")
	if err != nil {
		return "", fmt.Errorf("build cache: %w", err)
	}
	defer unlock()
	if err := checkBinary(bin, s.Toolchain); err == nil {
		return bin, nil // built by another process meanwhile
	}
	tmp, err := os.MkdirTemp(CacheDir(), "build-")
	if err != nil {
		return "", fmt.Errorf("build cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	args := append([]string{"build", "-o", filepath.Join(tmp, name)}, flags...)
	cmd := exec.CommandContext(ctx, goCommand(), append(args, ".")...)
	cmd.Dir = dir
	cmd.Env = append(toolchainEnv(s.Toolchain), "CGO_ENABLED=0", "GOEXPERIMENT="+s.Experiment, "GOARCH="+s.arch())
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s with %s (%s): %v\n%s", dir, s.Toolchain, s.Mode, err, out)
	}
	if err := checkBinary(filepath.Join(tmp, name), s.Toolchain); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		// Another build of the same key got there first: use it.
		if cerr := checkBinary(bin, s.Toolchain); cerr != nil {
			return "", fmt.Errorf("build cache: %w", errors.Join(err, cerr))
		}
	}
	return bin, nil
}

// checkBinary reports whether path is a Go binary built by toolchain.
func checkBinary(path, toolchain string) error {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return err
	}
	if !BuiltBy(bi.GoVersion, toolchain) {
		return fmt.Errorf("%s was built by %s, not %s (GOTOOLCHAIN not honoured?)", path, bi.GoVersion, toolchain)
	}
	return nil
}

// BuiltBy reports whether goVersion, a binary's build info version,
// names toolchain: equal, or followed by a suffix such as
// "-X:goroutineleakprofile" for a build with a GOEXPERIMENT.
func BuiltBy(goVersion, toolchain string) bool {
	rest, ok := strings.CutPrefix(goVersion, toolchain)
	return ok && (rest == "" || rest[0] == '-' || rest[0] == ' ')
}

// cacheKey hashes everything the binary depends on.
func cacheKey(dir string, s Spec) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "leakscope-build/1\x00%s\x00%s\x00%s\x00%s/%s\x00%s\x00", s.Toolchain, s.Mode, s.Experiment, runtime.GOOS, s.arch(), dir)
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != dir && (d.Name()[0] == '.' || d.Name()[0] == '_') {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(dir, f)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// TargetDir is the absolute directory of the matrix's target program,
// found from this file's compile-time path (so it fails for a binary
// built with -trimpath or moved away from the source tree).
func TargetDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", errors.New("versions: source path unknown")
	}
	dir := filepath.Join(filepath.Dir(file), "target")
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("versions: target program: %w", err)
	}
	return dir, nil
}
