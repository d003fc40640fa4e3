package archtest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// folders are the module's top-level folders from the top down: a
// package may import (outside its tests) only packages of its own folder
// or of one below it, so imports between folders run one way and no two
// folders import each other. dev/ (tests, benchmarks, make's tools) and
// cmd/ stand on everything; internal/ holds the shared leaves.
var folders = []string{"dev", "cmd", "deploy", "agent", "web", "export", "capture", "analysis", "samples", "flight", "ingest", "internal"}

// TestFolderOrder checks every package's imports (tests aside, which may
// use dev/'s tools) against the order of folders.
func TestFolderOrder(t *testing.T) {
	cmd := exec.Command("go", "list", "-e", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var edges int
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		from := folderOf(fields[0])
		if from == "" {
			continue
		}
		rank := slices.Index(folders, from)
		if rank < 0 {
			t.Errorf("%s is in folder %s/, which the order of folders does not name", fields[0], from)
			continue
		}
		for _, imp := range fields[1:] {
			to := folderOf(imp)
			if to == "" || to == from {
				continue
			}
			edges++
			if r := slices.Index(folders, to); r < rank {
				t.Errorf("%s imports %s: %s/ stands above %s/ (archtest's folders)", fields[0], imp, to, from)
			}
		}
	}
	if edges < 10 {
		t.Fatalf("only %d imports between folders; is the module layout right?", edges)
	}
}

// folderOf is the top-level folder of one of the module's packages, or
// "" for another module's package or the module's root.
func folderOf(path string) string {
	rel, ok := strings.CutPrefix(path, module+"/")
	if !ok {
		return ""
	}
	top, _, _ := strings.Cut(rel, "/")
	return top
}
