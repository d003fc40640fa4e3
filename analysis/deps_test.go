package analysis_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies enforces the import rules of docs/DESIGN.md: analysis
// (and its report renderer) read bundles through ingest/bundle and
// ingest/schema, draw flame graphs with analysis/flame, and never reach
// HTTP, capture or web.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/leakscope/leakscope/analysis", "github.com/leakscope/leakscope/analysis/report").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{
		"github.com/leakscope/leakscope/analysis":        true,
		"github.com/leakscope/leakscope/analysis/report": true,
		"github.com/leakscope/leakscope/analysis/flame":  true,
		"github.com/leakscope/leakscope/ingest/bundle":   true,
		"github.com/leakscope/leakscope/ingest/schema":   true,
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "net/http" {
			t.Errorf("analysis depends on net/http")
		}
		if strings.HasPrefix(p, "github.com/leakscope/leakscope/") && !allowed[p] {
			t.Errorf("analysis depends on %s", p)
		}
	}
}
