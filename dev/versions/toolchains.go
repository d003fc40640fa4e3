package versions

import (
	"bytes"
	"context"
	"fmt"
	"go/version"
	"os"
	"os/exec"
	"strings"
)

// Toolchains are the Go releases the version matrix runs, oldest first:
// the newest patch release of each minor version leakscope supports.
var Toolchains = []string{"go1.22.12", "go1.23.12", "go1.24.9", "go1.25.5", "go1.26.8", "go1.27.3"}

// Untested is a toolchain outside the supported range, used to check how
// leakscope treats a version it was not tested with (eBPF tries it from
// DWARF with a warning; traces of its format are refused).
const Untested = "go1.21.13"

// Lang returns the language version of a toolchain, "go1.22" for
// "go1.22.12".
func Lang(toolchain string) string { return version.Lang(toolchain) }

// LeakProfileExperiment returns the GOEXPERIMENT a toolchain needs for
// its runtime to serve the goroutineleak profile, and whether the runtime
// can serve it at all: Go 1.26 with goroutineleakprofile, Go 1.27 and
// later by default, nothing before.
func LeakProfileExperiment(toolchain string) (experiment string, ok bool) {
	switch l := Lang(toolchain); {
	case version.Compare(l, "go1.26") < 0:
		return "", false
	case l == "go1.26":
		return "goroutineleakprofile", true
	default:
		return "", true
	}
}

// goCommand is the go command that switches toolchains.
func goCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
}

// toolchainEnv is the environment that runs toolchain: GOTOOLCHAIN pins
// it (downloaded through the module proxy on first use), and settings an
// older toolchain might reject (a GOEXPERIMENT it lacks, a workspace) are
// cleared.
func toolchainEnv(toolchain string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOTOOLCHAIN", "GOEXPERIMENT", "GOWORK", "CGO_ENABLED", "GOOS", "GOARCH":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GOTOOLCHAIN="+toolchain, "GOWORK=off")
}

// Fetch makes sure toolchain is in the module cache, downloading it
// through the module proxy if needed, and returns its GOROOT.
func Fetch(ctx context.Context, toolchain string) (string, error) {
	cmd := exec.CommandContext(ctx, goCommand(), "env", "GOVERSION", "GOROOT")
	cmd.Env = toolchainEnv(toolchain)
	cmd.Dir = os.TempDir() // outside any module whose go line could interfere
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("fetch %s through GOTOOLCHAIN (needs the Go module proxy): %v\n%s", toolchain, err, stderr.Bytes())
	}
	lines := strings.Fields(string(out))
	if len(lines) != 2 || lines[0] != toolchain {
		return "", fmt.Errorf("fetch %s: go env printed %q", toolchain, out)
	}
	return lines[1], nil
}
