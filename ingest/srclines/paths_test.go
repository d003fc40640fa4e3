package srclines

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// trimProg prints the file, function and line of each of its frames.
const trimProg = `package main

import (
	"fmt"
	"runtime"
)

func leaf() {
	pc := make([]uintptr, 8)
	frames := runtime.CallersFrames(pc[:runtime.Callers(1, pc)])
	for {
		f, more := frames.Next()
		fmt.Printf("%s\t%s\t%d\n", f.File, f.Function, f.Line)
		if !more {
			return
		}
	}
}

func main() { leaf() }
`

// TestTrimpathSourceRoot builds a real program with -trimpath, whose
// frames name example.com/tp/main.go, and finds its source only under
// --source-root (the checkout, here moved away from where it was built).
func TestTrimpathSourceRoot(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go program")
	}
	build := t.TempDir()
	os.WriteFile(filepath.Join(build, "go.mod"), []byte("module example.com/tp\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(build, "main.go"), []byte(trimProg), 0o644)
	bin := filepath.Join(t.TempDir(), "tp")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	cmd.Dir = build
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	var frames []bundle.StackFrame
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		p := strings.Split(sc.Text(), "\t")
		line, _ := strconv.Atoi(p[2])
		frames = append(frames, bundle.StackFrame{File: p[0], Function: p[1], Line: int64(line)})
	}
	if len(frames) == 0 || frames[0].File != "example.com/tp/main.go" || frames[0].Function != "main.leaf" {
		t.Fatalf("frames of a -trimpath build: %+v", frames)
	}
	checkout := filepath.Join(t.TempDir(), "src")
	if err := os.Rename(build, checkout); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		roots []string
		want  string
	}{
		{nil, schema.SourceUnavailable},
		{[]string{t.TempDir(), checkout}, schema.SourceOK},
	} {
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		dir := filepath.Join(t.TempDir(), "b.lsb")
		w, err := bundle.Create(dir, bundle.Manifest{}, mem)
		if err != nil {
			t.Fatal(err)
		}
		w.StackID(frames)
		if _, err := Snapshot(w, mem, Options{Source: "ingest", SourceRoots: c.roots}); err != nil {
			t.Fatal(err)
		}
		w.Close()
		rows := readRows(t, dir, mem)
		leaf := rows["main.leaf"]
		if leaf.Status != c.want || leaf.File != "example.com/tp/main.go" {
			t.Errorf("roots %v: main.leaf %+v, want %s under its recorded path", c.roots, leaf, c.want)
		}
		if c.want == schema.SourceOK && (leaf.StartLine != 8 || !strings.HasPrefix(leaf.Text, "func leaf() {")) {
			t.Errorf("kept %d: %q", leaf.StartLine, leaf.Text)
		}
		mem.AssertSize(t, 0)
	}
}

// TestCandidates maps module paths with versions (-trimpath, a module
// cache path from another machine) to the module cache, escaped as it
// names them, and container paths to a checkout.
func TestCandidates(t *testing.T) {
	opts := Options{SourceRoots: []string{"/src"}, ModCache: "/gomod"}
	for path, want := range map[string]string{
		"github.com/BurntSushi/toml@v1.4.0/decode.go":                   "/gomod/github.com/!burnt!sushi/toml@v1.4.0/decode.go",
		"/root/go/pkg/mod/k8s.io/client-go@v0.31.0/tools/cache/fifo.go": "/gomod/k8s.io/client-go@v0.31.0/tools/cache/fifo.go",
		"/app/cmd/server/main.go":                                       "/src/cmd/server/main.go",
	} {
		got := Candidates(path, opts)
		found := false
		for _, g := range got {
			found = found || g == want
		}
		if !found {
			t.Errorf("%s: %v, want %s among them", path, got, want)
		}
	}
	if mod, ver, rest, ok := modVersion("/x/pkg/mod/github.com/!burnt!sushi/toml@v1.4.0/decode.go"); !ok || mod != "github.com/BurntSushi/toml" || ver != "v1.4.0" || rest != "decode.go" {
		t.Errorf("modVersion: %q %q %q %v", mod, ver, rest, ok)
	}
	if got := Candidates("/a/b.go", Options{}); len(got) != 1 || got[0] != "/a/b.go" {
		t.Errorf("no roots: %v", got)
	}
}
