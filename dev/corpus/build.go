package corpus

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/leakscope/leakscope/samples/blocking"
)

// Toolchain is the Go the programs are built with.
type Toolchain struct {
	// Name is shown in the table ("go1.27.3").
	Name string
	// Env is added to the go command's environment (GOTOOLCHAIN,
	// GOEXPERIMENT).
	Env []string
}

// DefaultToolchain is Go 1.27.3 from the module proxy: the current release,
// which serves the goroutineleak profile without an experiment. The go
// command downloads it on first use.
var DefaultToolchain = Toolchain{Name: "go1.27.3", Env: []string{"GOTOOLCHAIN=go1.27.3"}}

// LocalExperimentToolchain is the installed Go built with
// GOEXPERIMENT=goroutineleakprofile (Go 1.26 needs it for the profile).
var LocalExperimentToolchain = Toolchain{Name: "local go, GOEXPERIMENT=goroutineleakprofile", Env: []string{"GOTOOLCHAIN=local", "GOEXPERIMENT=goroutineleakprofile"}}

// ToolchainFromEnv returns the toolchain named by $LEAKSCOPE_CORPUS_GO:
// empty for [DefaultToolchain], "local" for [LocalExperimentToolchain],
// else a toolchain version such as "go1.26.8" (given GOEXPERIMENT too, so
// the profile exists on 1.26).
func ToolchainFromEnv() Toolchain {
	switch v := os.Getenv("LEAKSCOPE_CORPUS_GO"); v {
	case "":
		return DefaultToolchain
	case "local":
		return LocalExperimentToolchain
	default:
		return Toolchain{Name: v + ", GOEXPERIMENT=goroutineleakprofile", Env: []string{"GOTOOLCHAIN=" + v, "GOEXPERIMENT=goroutineleakprofile"}}
	}
}

// build copies p's directory to srcDir and compiles the copy into dir with
// the pprof hook added: `go test -c` for a test kernel, `go build` for a
// service. It returns the binary's path. The binary's frames name files
// under srcDir, so the harness can take the source away at ingest (see
// [Evaluate]) without touching the corpus.
func build(ctx context.Context, p blocking.Program, tc Toolchain, dir, srcDir string) (string, error) {
	if err := copyTree(p.Dir, srcDir); err != nil {
		return "", fmt.Errorf("copy %s: %w", p.Truth.Name, err)
	}
	test := p.Truth.Shape == blocking.ShapeTest
	name, src := hookFile(p.Package(), test)
	hook := filepath.Join(dir, p.Truth.Name+"-"+name)
	if err := os.WriteFile(hook, []byte(src), 0o644); err != nil {
		return "", err
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(srcDir, name): hook}})
	if err != nil {
		return "", err
	}
	ov := filepath.Join(dir, p.Truth.Name+"-overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, p.Truth.Name)
	args := []string{"build", "-overlay", ov, "-o", bin, "."}
	if test {
		args = []string{"test", "-c", "-vet=off", "-overlay", ov, "-o", bin, "."}
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = srcDir
	// Static, as operators usually ship (and cgo's extra M would hide a
	// whole-process deadlock from the runtime's detector).
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	cmd.Env = append(cmd.Env, tc.Env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s with %s: %w\n%s", p.Truth.Name, tc.Name, err, out)
	}
	return bin, nil
}

// copyTree copies the regular files under src to dst (created).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
}
