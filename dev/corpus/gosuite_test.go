package corpus

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestGoLeakSuite runs the Go team's goroutine leak suite
// ($GOROOT/src/runtime/testdata/testgoroutineleakprofile, truth and
// repetitions from goroutineleakprofile_test.go) and scores, run by run,
// what leakscope names from one debug=2 dump taken before any
// goroutineleak profile (so without the runtime's marks) beside what the
// runtime's own profile names in the same run. It fails when a non-flaky
// leak is missed in a run, when leakscope names less than flakyFloor of
// the flaky leak-runs the runtime's profile names, when a no-leak case
// gets a suspect (a wait on a package-level object no statement can
// release is a provable finding, allowed), when any suspect matches none
// of its case's leaks, and when docs/ACCURACY.md's table claims rows
// this run does not reproduce (LEAKSCOPE_SUITE_UPDATE=1 writes it).
// LEAKSCOPE_SUITE_ONLY=A,B runs only those cases; LEAKSCOPE_SUITE_KEEP=dir
// keeps the runs' dumps, outputs and bundles; LEAKSCOPE_SUITE_INPUTS=dir
// scores the runs kept there again instead of running the programs;
// LEAKSCOPE_SUITE_FORM=traceback takes a SIGQUIT traceback instead of
// the dump, =test-traceback the same of the case run as a Go test whose
// TestMain sleeps (no runtime profile then: its column reads 0, and the
// table is not checked); LEAKSCOPE_SUITE_GO=go1.27.3 builds the cases
// with that toolchain (the table is not checked either).
func TestGoLeakSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the Go leak suite's programs, several hundred times")
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	goroot := strings.TrimSpace(string(out))
	cases, err := LoadSuite(goroot)
	if err != nil {
		t.Skipf("this Go has no leak suite: %v", err)
	}
	if only := os.Getenv("LEAKSCOPE_SUITE_ONLY"); only != "" {
		cases = keepCases(cases, strings.Split(only, ","))
	}
	form := FormDump
	switch f := SuiteForm(os.Getenv("LEAKSCOPE_SUITE_FORM")); f {
	case "", FormDump:
	case FormTraceback, FormTestTraceback:
		form = f
	default:
		t.Fatalf("LEAKSCOPE_SUITE_FORM=%s: want %s, %s or %s", f, FormDump, FormTraceback, FormTestTraceback)
	}
	toolchain := "local"
	if v := os.Getenv("LEAKSCOPE_SUITE_GO"); v != "" {
		toolchain = v
	}
	var runs map[string][]SuiteOutcome
	if in := os.Getenv("LEAKSCOPE_SUITE_INPUTS"); in != "" {
		runs = rescoreSuite(t, cases, in)
	} else {
		runs = buildAndRunSuite(t, goroot, cases, form, toolchain)
	}
	tab := SuiteTable(cases, runs)
	for _, p := range tab.Problems() { // first: a CI log cut short keeps them
		t.Error(p)
	}
	t.Logf("the Go leak suite, leakscope from one dump beside the runtime's profile:\n%s\n%s", tab.Markdown(), tab.Details())
	if len(cases) < 10 || form != FormDump || toolchain != "local" {
		return // a few cases, another form or another Go: for a look
	}
	checkSuiteTable(t, tab)
}

// checkSuiteTable writes the table into docs/ACCURACY.md under
// LEAKSCOPE_SUITE_UPDATE=1, else checks the rows every run reproduces.
func checkSuiteTable(t *testing.T, tab *SuiteTab) {
	page, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("LEAKSCOPE_SUITE_UPDATE") == "1" {
		out, err := tab.WriteInto(string(page))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(readmePath, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, s := range tab.Stale(string(page)) {
		t.Error(s)
	}
}

// buildAndRunSuite builds the suite's programs and runs every case.
func buildAndRunSuite(t *testing.T, goroot string, cases []SuiteCase, form SuiteForm, toolchain string) map[string][]SuiteOutcome {
	tmp := t.TempDir()
	if keep := os.Getenv("LEAKSCOPE_SUITE_KEEP"); keep != "" {
		tmp = keep // the dumps, outputs and bundles stay there
	}
	bins := map[string]string{}
	for _, dir := range []string{"testgoroutineleakprofile", "testgoroutineleakprofile/goker"} {
		bin, err := BuildSuite(context.Background(), goroot, dir, filepath.Join(tmp, filepath.Base(dir)), form, toolchain)
		if err != nil {
			t.Fatal(err)
		}
		bins[dir] = bin
	}
	return runSuite(t, cases, bins, tmp, form)
}

// rescoreSuite scores again the runs LEAKSCOPE_SUITE_KEEP kept in dir
// (NAME-R.dump and its .out), each into a new bundle.
func rescoreSuite(t *testing.T, cases []SuiteCase, dir string) map[string][]SuiteOutcome {
	out := map[string][]SuiteOutcome{}
	for _, c := range cases {
		for r := range c.Reps {
			run, err := ReadSuiteRun(filepath.Join(dir, fmt.Sprintf("%s-%d.dump", c.Name, r)))
			if err != nil {
				t.Fatalf("LEAKSCOPE_SUITE_INPUTS: %v", err)
			}
			out[c.Name] = append(out[c.Name], ScoreSuiteRun(c, run, filepath.Join(t.TempDir(), "run.lsb")))
		}
	}
	return out
}

// runSuite runs every case its repetitions, a CPU's worth at a time,
// and scores each run.
func runSuite(t *testing.T, cases []SuiteCase, bins map[string]string, tmp string, form SuiteForm) map[string][]SuiteOutcome {
	out := map[string][]SuiteOutcome{}
	var mu sync.Mutex
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, c := range cases {
		for r := range c.Reps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				dir := filepath.Join(tmp, fmt.Sprintf("%s-%d", c.Name, r))
				o := SuiteOutcome{Case: c.Name}
				run, err := RunSuiteCase(context.Background(), bins[c.Dir], c, dir+".dump", form)
				if err != nil {
					o.Err = err.Error()
				} else {
					o = ScoreSuiteRun(c, run, dir+".lsb")
				}
				mu.Lock()
				out[c.Name] = append(out[c.Name], o)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	return out
}

// keepCases keeps the named cases.
func keepCases(cases []SuiteCase, names []string) []SuiteCase {
	var out []SuiteCase
	for _, c := range cases {
		for _, n := range names {
			if c.Name == n {
				out = append(out, c)
			}
		}
	}
	return out
}
