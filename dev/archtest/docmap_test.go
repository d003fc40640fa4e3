package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestAnalysisDocMap checks that analysis/doc.go's map of the pipeline
// stays true: it names every non-test file of package analysis, and
// every file it names exists.
func TestAnalysisDocMap(t *testing.T) {
	const dir = "../../analysis"
	doc, err := os.ReadFile(filepath.Join(dir, "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b[a-z][a-z0-9_]*\.go\b`).FindAllString(string(doc), -1) {
		named[m] = true
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, f := range files {
		if name := filepath.Base(f); !strings.HasSuffix(name, "_test.go") {
			have = append(have, name)
		}
	}
	for _, name := range have {
		if !named[name] && name != "doc.go" {
			t.Errorf("analysis/doc.go does not name analysis/%s: say what it holds in the map of its stage", name)
		}
	}
	for name := range named {
		if !slices.Contains(have, name) {
			t.Errorf("analysis/doc.go names %s, which package analysis does not have", name)
		}
	}
}
