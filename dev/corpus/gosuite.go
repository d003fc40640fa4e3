package corpus

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/leakscope/leakscope/internal/gosym"
)

// The Go team's goroutine leak suite: the programs of
// $GOROOT/src/runtime/testdata/testgoroutineleakprofile (and its goker/
// directory of GoBench kernels), with its truth read from the test that
// runs them, $GOROOT/src/runtime/goroutineleakprofile_test.go.

// SuiteCase is one test case of the suite.
type SuiteCase struct {
	Name string
	// Dir is the program's directory under the suite
	// ("testgoroutineleakprofile" or "testgoroutineleakprofile/goker").
	Dir string
	// Simple cases run with GOMAXPROCS=1.
	Simple bool
	// Reps is how many times the Go test runs the case.
	Reps int
	// Expected are the leaks every run together must show; Flaky those
	// that may show (true leaks whose detection depends on scheduling).
	// Each matches the runtime's "function() [wait reason]" form.
	Expected, Flaky []*regexp.Regexp
}

// suiteLists maps the test's case lists to the directory of their
// program.
var suiteLists = map[string]string{
	"microTests": "testgoroutineleakprofile", "stressTestCases": "testgoroutineleakprofile",
	"patternTestCases": "testgoroutineleakprofile", "gokerTestCases": "testgoroutineleakprofile/goker",
}

// SuiteRoot is the suite's directory in a Go root.
func SuiteRoot(goroot string) string {
	return filepath.Join(goroot, "src", "runtime", "testdata")
}

// LoadSuite reads the suite's cases from the Go root's test file: every
// makeTest and makeFlakyTest call in its case lists, with the
// repetitions the test's own helpers give (not in -short mode).
func LoadSuite(goroot string) ([]SuiteCase, error) {
	path := filepath.Join(goroot, "src", "runtime", "goroutineleakprofile_test.go")
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the Go team's leak suite: %w", err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, src, 0)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	reps := helperReps(f)
	if reps["makeTest"] == 0 || reps["makeFlakyTest"] == 0 {
		return nil, fmt.Errorf("%s: no makeTest or makeFlakyTest helper with its repetitions", path)
	}
	var out []SuiteCase
	var perr error
	ast.Inspect(f, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return true
		}
		id, _ := as.Lhs[0].(*ast.Ident)
		lit, _ := as.Rhs[0].(*ast.CompositeLit)
		if id == nil || lit == nil || suiteLists[id.Name] == "" {
			return true
		}
		for _, el := range lit.Elts {
			c, err := suiteCase(el, suiteLists[id.Name], reps)
			if err != nil {
				perr = err
				return false
			}
			out = append(out, c)
		}
		return false
	})
	if perr != nil {
		return nil, fmt.Errorf("%s: %w", path, perr)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no test case found", path)
	}
	return out, nil
}

// suiteCase reads one makeTest("Name", leaks...) or makeFlakyTest call.
func suiteCase(el ast.Expr, dir string, reps map[string]int) (SuiteCase, error) {
	call, ok := el.(*ast.CallExpr)
	if !ok || len(call.Args) == 0 {
		return SuiteCase{}, fmt.Errorf("a case is not a helper call")
	}
	fn, _ := call.Fun.(*ast.Ident)
	if fn == nil || reps[fn.Name] == 0 {
		return SuiteCase{}, fmt.Errorf("unknown case helper %v", call.Fun)
	}
	var strs []string
	for _, a := range call.Args {
		bl, ok := a.(*ast.BasicLit)
		if !ok || bl.Kind != token.STRING {
			return SuiteCase{}, fmt.Errorf("a %s argument is not a string literal", fn.Name)
		}
		s, err := strconv.Unquote(bl.Value)
		if err != nil {
			return SuiteCase{}, err
		}
		strs = append(strs, s)
	}
	c := SuiteCase{Name: strs[0], Dir: dir, Simple: fn.Name == "makeTest", Reps: reps[fn.Name]}
	for _, s := range strs[1:] {
		re, err := regexp.Compile(s)
		if err != nil {
			return SuiteCase{}, fmt.Errorf("%s: %w", c.Name, err)
		}
		if c.Simple {
			c.Expected = append(c.Expected, re)
		} else {
			c.Flaky = append(c.Flaky, re)
		}
	}
	return c, nil
}

// helperReps reads the repetitions the test's makeTest and makeFlakyTest
// helpers give: the third argument of the last makeAnyTest call in each
// (the one outside testing.Short), or'ed with 1 as makeAnyTest does.
func helperReps(f *ast.File) map[string]int {
	out := map[string]int{}
	ast.Inspect(f, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return true
		}
		id, _ := as.Lhs[0].(*ast.Ident)
		lit, _ := as.Rhs[0].(*ast.FuncLit)
		if id == nil || lit == nil || id.Name != "makeTest" && id.Name != "makeFlakyTest" {
			return true
		}
		ast.Inspect(lit.Body, func(m ast.Node) bool {
			if c, ok := m.(*ast.CallExpr); ok && len(c.Args) >= 3 {
				if fn, _ := c.Fun.(*ast.Ident); fn != nil && fn.Name == "makeAnyTest" {
					if bl, ok := c.Args[2].(*ast.BasicLit); ok {
						if v, err := strconv.Atoi(bl.Value); err == nil {
							out[id.Name] = v | 1
						}
					}
				}
			}
			return true
		})
		return false
	})
	return out
}

// LeakLines turns a goroutine dump (a SIGQUIT traceback, or the
// runtime's goroutineleak profile at debug=2) into the suite's
// "function() [wait reason]" form, one per goroutine created by
// another, as the Go test reads its output: the frame above "created
// by" (past a traceback's goexit and go statement wrapper), without
// "main." (or a test binary's "leaksuite."), and the wait reason
// without the wait time. onlyLeaked keeps the goroutines the
// runtime marked "(leaked)" (their mark removed). The result maps each
// goroutine id to its line.
func LeakLines(dump string, onlyLeaked bool) map[int64]string {
	out := map[int64]string{}
	for _, g := range strings.Split(dump, "\n\ngoroutine ") {
		lines := strings.Split(strings.TrimPrefix(strings.TrimSpace(g), "goroutine "), "\n")
		if len(lines) < 5 {
			continue
		}
		header := lines[0]
		if onlyLeaked && !strings.Contains(header, "(leaked)") {
			continue
		}
		id, rest, ok := strings.Cut(header, " [")
		id, _, _ = strings.Cut(id, " ") // a traceback's "5 gp=0x… m=nil"
		goid, err := strconv.ParseInt(id, 10, 64)
		if !ok || err != nil {
			continue
		}
		reason, _, _ := strings.Cut(rest, "]")
		reason = strings.ReplaceAll(reason, " (leaked)", "")
		reason, _, _ = strings.Cut(reason, ", ") // the wait time, "locked to thread"
		for i := len(lines) - 1; i >= 2; i-- {
			if strings.HasPrefix(lines[i], "created by") {
				j := i - 2
				for j >= 3 && startFrame(lines[j]) {
					j -= 2 // a traceback prints goexit and the go statement's wrapper
				}
				fn := strings.TrimPrefix(strings.TrimPrefix(lines[j], "main."), suiteModule+".")
				out[goid] = fn + " [" + reason + "]"
				break
			}
		}
	}
	return out
}

// startFrame reports a frame line a debug=2 dump leaves out and a
// traceback prints: runtime.goexit, or a wrapper the compiler made for
// a go statement.
func startFrame(line string) bool {
	i := strings.LastIndexByte(line, '(')
	if i < 0 {
		return false
	}
	fn := line[:i]
	return fn == "runtime.goexit" || gosym.Wrapper(fn)
}
