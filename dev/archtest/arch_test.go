// Package archtest holds the tests that keep leakscope's shape: imports
// pointing one way (cmd → agent, web, export, capture, analysis → ingest;
// docs/DESIGN.md; folders in one order, dev/ on top and internal/ at the
// bottom), the stages of package analysis used in their order,
// and no function, Go or JavaScript, over 80 lines.
package archtest

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/leakscope/leakscope"

// forbidden lists, per package prefix (relative to the module), the
// prefixes its non-test dependencies must not have. "std:" entries name
// standard-library packages.
var forbidden = map[string][]string{
	"ingest/schema":   {"ingest/bundle", "ingest/dump", "ingest/gotrace", "ingest/profiles", "ingest/srclines", "analysis", "capture", "web", "cmd", "samples"},
	"ingest/bundle":   {"ingest/dump", "ingest/gotrace", "ingest/profiles", "ingest/srclines"},
	"ingest/srclines": {"ingest/dump", "ingest/gotrace", "ingest/profiles"},
	"ingest":          {"analysis", "capture", "web", "cmd", "samples", "agent", "export"},
	"analysis":        {"capture", "web", "cmd", "samples", "agent", "export", "ingest/dump", "ingest/gotrace", "ingest/profiles", "ingest/srclines", "std:net/http"},
	"capture":         {"analysis", "web", "cmd", "agent", "export"},
	"web":             {"capture", "cmd", "agent", "ingest/dump", "ingest/gotrace", "ingest/profiles", "ingest/srclines"},
	"agent":           {"web", "cmd", "export", "samples"},
	"export":          {"capture", "web", "cmd", "agent", "samples", "ingest/dump", "ingest/gotrace", "ingest/profiles", "ingest/srclines"},
	"samples":         {"ingest", "analysis", "capture", "web", "cmd", "agent", "export"},
	// Leaves: the shipped hooks and helpers (kill points, formatting of
	// figures, HTTP request guards, Go symbol names) import nothing of
	// ours.
	"ingest/killpoint":   ours,
	"internal/format":    ours,
	"internal/httpguard": ours,
	"internal/gosym":     ours,
	// The program read as Go: source text and the standard library in,
	// who can wake what out; it knows no bundle.
	"analysis/internal/gosrc": ours,
	// The bundle's rows read into the stages' structures: the bundle and
	// its schema in, no stage of the analysis.
	"analysis/internal/tables": {"ingest/dump", "ingest/gotrace", "ingest/profiles", "ingest/srclines",
		"analysis", "capture", "web", "cmd", "agent", "export", "samples", "flight"},
	// The flight recorder a service imports.
	"flight": ours,
	// Development tools that stand alone: benchmark statistics, the Go
	// version matrix (whose fetch command is its own).
	"dev/benchstat": append(ours[:len(ours):len(ours)], "dev"),
	"dev/versions":  append(ours[:len(ours):len(ours)], "dev/corpus", "dev/archtest", "dev/golden"),
	// The accuracy harness reads bundles and analyses them, nothing more.
	"dev/corpus": {"capture", "web", "cmd", "agent", "export"},
}

// ours lists every top-level part of the module, for leaf packages.
var ours = []string{"ingest/bundle", "ingest/schema", "ingest/dump", "ingest/gotrace", "ingest/profiles", "ingest/srclines",
	"analysis", "capture", "web", "cmd", "agent", "export", "samples", "flight"}

func init() {
	// dev/ holds what only tests, benchmarks and make serve; nothing
	// shipped imports it.
	for _, p := range []string{"ingest", "analysis", "capture", "web", "cmd", "agent", "export", "internal", "flight"} {
		forbidden[p] = append(forbidden[p], "dev")
	}
}

type pkg struct {
	ImportPath string
	Deps       []string
}

func TestDependencyDirection(t *testing.T) {
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Deps", module+"/...")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Dir = "../.."
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(out)
	var checked int
	matched := map[string]bool{}
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		for prefix, bad := range forbidden {
			if !under(rel, prefix) {
				continue
			}
			checked++
			matched[prefix] = true
			for _, d := range p.Deps {
				for _, b := range bad {
					if std, ok := strings.CutPrefix(b, "std:"); ok {
						if d == std {
							t.Errorf("%s imports %s (forbidden by docs/DESIGN.md)", p.ImportPath, d)
						}
						continue
					}
					if under(strings.TrimPrefix(d, module+"/"), b) && strings.HasPrefix(d, module+"/") {
						t.Errorf("%s depends on %s (forbidden by docs/DESIGN.md)", p.ImportPath, d)
					}
				}
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	for prefix := range forbidden {
		if !matched[prefix] {
			t.Errorf("a rule names %s, which holds no package: keep the rules to the code", prefix)
		}
	}
	if checked < 5 {
		t.Fatalf("checked only %d packages; is the module layout right?", checked)
	}
}

func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}
