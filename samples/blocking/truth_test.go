package blocking

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorpusTruths checks every truth file, the size of the corpus the
// issue asks for, and that each program is its own dot-free module.
func TestCorpusTruths(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	progs, err := All(root)
	if err != nil {
		t.Fatal(err)
	}
	var bugs, controls, tests int
	for _, p := range progs {
		if p.Truth.Healthy {
			controls++
		} else {
			bugs++
		}
		if p.Truth.Shape == ShapeTest {
			tests++
		}
		mod, err := os.ReadFile(filepath.Join(p.Dir, "go.mod"))
		if err != nil {
			t.Errorf("%s: %v", p.Truth.Name, err)
			continue
		}
		first := strings.SplitN(string(mod), "\n", 2)[0]
		if path := strings.TrimPrefix(first, "module "); path == first || strings.Contains(path, ".") {
			t.Errorf("%s: go.mod must start with a dot-free module line, got %q", p.Truth.Name, first)
		} else if p.Truth.Shape == ShapeTest && path != p.Truth.Name {
			t.Errorf("%s: a test kernel's module path must be its name (its package path), got %q", p.Truth.Name, path)
		}
	}
	if bugs < 30 || controls < 10 || tests < bugs/2 {
		t.Errorf("corpus has %d bugs, %d controls, %d test kernels; want at least 30 bugs, 10 controls, half of the bugs as test kernels", bugs, controls, tests)
	}
}

func TestValidateRejects(t *testing.T) {
	ok := Truth{Name: "x", Shape: ShapeService, Class: "double-lock", Pattern: "lock-never-released",
		Blocked: []Goroutines{{Function: "main.f", State: "sync.Mutex.Lock", Count: 1}}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid truth rejected: %v", err)
	}
	for name, edit := range map[string]func(*Truth){
		"dotted name":       func(t *Truth) { t.Name = "a.b" },
		"unknown shape":     func(t *Truth) { t.Shape = "lib" },
		"unknown class":     func(t *Truth) { t.Class = "oops" },
		"no blocked":        func(t *Truth) { t.Blocked = nil },
		"zero count":        func(t *Truth) { t.Blocked[0].Count = 0 },
		"healthy with bug":  func(t *Truth) { t.Healthy = true },
		"test without name": func(t *Truth) { t.Shape = ShapeTest },
		"test without runner": func(t *Truth) {
			t.Shape, t.Test = ShapeTest, "TestX"
		},
		"pattern on a consequence": func(t *Truth) {
			t.Consequences = []Goroutines{{Function: "main.g", State: "chan receive", Count: 1, Pattern: "x"}}
		},
		"group pattern none": func(t *Truth) { t.Blocked[0].Pattern = "none" },
	} {
		bad := ok
		bad.Blocked = append([]Goroutines(nil), ok.Blocked...)
		edit(&bad)
		if err := bad.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestPatternOf checks that a blocked group's own pattern wins over the
// truth's, for its function only.
func TestPatternOf(t *testing.T) {
	tr := Truth{Pattern: "lock-order-cycle", Blocked: []Goroutines{
		{Function: "main.transfer", State: "sync.Mutex.Lock", Count: 2},
		{Function: "main.awaitReceipt", State: "chan receive", Count: 5, Pattern: "chan-receive-never-closed"},
	}}
	for fn, want := range map[string]string{
		"main.transfer":     "lock-order-cycle",
		"main.awaitReceipt": "chan-receive-never-closed",
		"main.other":        "lock-order-cycle",
	} {
		if got := tr.PatternOf(fn); got != want {
			t.Errorf("PatternOf(%s) = %q, want %q", fn, got, want)
		}
	}
}

// TestReadmeListsEveryProgram keeps the corpus README's tables in step
// with the directories.
func TestReadmeListsEveryProgram(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	progs, err := All(root)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range progs {
		if !strings.Contains(string(readme), "| `"+p.Truth.Name+"` |") {
			t.Errorf("README.md has no row for %s", p.Truth.Name)
		}
	}
}
