package archtest

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// stages are the stages of the analysis pipeline in the order it runs
// them (analysis/doc.go); a file belongs to the stage its name starts
// with. The shared files come first: the report's types (api_), leaves
// (common.go) and the budget every stage checks. The entry points that run
// the pipeline come last.
var stages = []string{"shared", "load", "evidence", "verdict", "attribute", "assemble", "view", "entry"}

// stageOfFile names the stage of a non-test file of package analysis, or
// "" for a file whose name says no stage.
func stageOfFile(name string) string {
	switch name {
	case "budget.go", "doc.go":
		return "shared"
	case "entry.go":
		return "entry"
	}
	base := strings.TrimSuffix(name, ".go")
	prefix, _, _ := strings.Cut(base, "_")
	switch prefix {
	case "api", "common":
		return "shared"
	case "load", "evidence", "verdict", "attribute", "assemble", "view":
		return prefix
	}
	return ""
}

func stageRank(stage string) int {
	for i, s := range stages {
		if s == stage {
			return i
		}
	}
	return -1
}

// stageUse is one name a file uses that a file of a later stage declares.
type stageUse struct {
	user, decl, name string
}

func (u stageUse) String() string { return u.user + " " + u.decl + " " + u.name }

// allowedStageUses is where the list of today's exceptions lives: one
// "user.go decl.go name" a line. It may only shrink.
const allowedStageUses = "testdata/stageorder.allow"

// TestStageOrder holds package analysis to its pipeline's order: a file
// may use names (functions, types, methods, fields, variables and
// constants of the package) declared only in files of its own stage or an
// earlier one. The exceptions of today are listed in
// testdata/stageorder.allow; a new one fails the test, and so does a
// listed one that no longer occurs, so the list only shrinks.
func TestStageOrder(t *testing.T) {
	uses, err := laterStageUses("../../analysis")
	if err != nil {
		t.Fatal(err)
	}
	allowed, err := readAllowed(allowedStageUses)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, u := range uses {
		seen[u.String()] = true
		if !allowed[u.String()] {
			t.Errorf("analysis/%s uses %s from analysis/%s, a later stage (%s after %s): move the name to the stage that first needs it, or the use to a later stage",
				u.user, u.name, u.decl, stageOfFile(u.decl), stageOfFile(u.user))
		}
	}
	for a := range allowed {
		if !seen[a] {
			t.Errorf("%s lists %q, which no longer occurs: delete the line", allowedStageUses, a)
		}
	}
	if len(uses) > 0 {
		t.Logf("%d uses of a later stage remain allowed", len(uses))
	}
}

// laterStageUses type-checks the non-test files of the package in dir
// and returns every use of a name declared in a file of a later stage,
// once per (user, declaring file, name), sorted. A file outside every
// stage is an error: the test would otherwise pass it by.
func laterStageUses(dir string) ([]stageUse, error) {
	fset := token.NewFileSet()
	files, err := parseNonTest(fset, dir)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		name := filepath.Base(fset.Position(f.Pos()).Filename)
		if stageOfFile(name) == "" {
			return nil, fmt.Errorf("analysis/%s: the name says no stage; prefix it with one of %v (see analysis/doc.go)", name, stages[1:len(stages)-1])
		}
	}
	imp, err := exportImporter(fset, dir)
	if err != nil {
		return nil, err
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: imp}
	pkg, err := conf.Check("analysis", fset, files, info)
	if err != nil {
		return nil, fmt.Errorf("type-check analysis: %w", err)
	}
	set := map[stageUse]bool{}
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !(obj.Parent() == pkg.Scope() || obj.Parent() == nil) {
			continue // another package's, a local, or a universe name
		}
		user := filepath.Base(fset.Position(id.Pos()).Filename)
		decl := filepath.Base(fset.Position(obj.Pos()).Filename)
		if stageRank(stageOfFile(decl)) > stageRank(stageOfFile(user)) {
			set[stageUse{user, decl, qualifiedName(obj)}] = true
		}
	}
	out := make([]stageUse, 0, len(set))
	for u := range set {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// qualifiedName names a method or field with its type, so that two
// types' members of one name stay apart.
func qualifiedName(obj types.Object) string {
	switch o := obj.(type) {
	case *types.Func:
		if recv := o.Signature().Recv(); recv != nil {
			return typeName(recv.Type()) + "." + o.Name()
		}
	case *types.Var:
		if o.IsField() {
			return "field " + o.Name()
		}
	}
	return obj.Name()
}

func typeName(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Name()
	}
	return t.String()
}

func parseNonTest(fset *token.FileSet, dir string) ([]*ast.File, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no Go files", dir)
	}
	return files, nil
}

// exportImporter imports the packages dir depends on from the export data
// the go command builds for them (go list -export).
func exportImporter(fset *token.FileSet, dir string) (types.Importer, error) {
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", ".")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export: %w", err)
	}
	export := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, " "); ok && file != "" {
			export[path] = file
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := export[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	}), nil
}

func readAllowed(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	allowed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		allowed[line] = true
	}
	return allowed, sc.Err()
}

// TestStageOrderFinds checks the checker on a package of four files: a
// load file that calls an evidence function and reads a field of a type
// declared in a view file is caught, the uses down the order are not.
func TestStageOrderFinds(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":        "module example.com/stages\n\ngo 1.22\n",
		"load.go":       "package stages\n\nfunc load(v view) int { return gather() + v.n }\n",
		"evidence.go":   "package stages\n\nfunc gather() int { return common() }\n",
		"common_x.go":   "package stages\n\nfunc common() int { return 1 }\n",
		"view_lanes.go": "package stages\n\ntype view struct{ n int }\n\nfunc lanes() int { return load(view{}) }\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	uses, err := laterStageUses(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range uses {
		got = append(got, u.String())
	}
	want := []string{"load.go evidence.go gather", "load.go view_lanes.go field n", "load.go view_lanes.go view"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("later-stage uses:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := os.WriteFile(filepath.Join(dir, "misc.go"), []byte("package stages\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := laterStageUses(dir); err == nil || !strings.Contains(err.Error(), "misc.go") {
		t.Errorf("a file outside every stage: err = %v, want one naming misc.go", err)
	}
}
