package samples

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mainFuncs returns the names of the functions declared in the package in
// dir, spelled as a goroutine dump spells them ("main.(*T).m", "main.f").
func mainFuncs(t *testing.T, dir string) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(matches) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	out := make(map[string]bool)
	for _, path := range matches {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name != "main" {
			t.Errorf("%s: package %s, want main", path, f.Name.Name)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			name := "main." + fd.Name.Name
			if fd.Recv != nil {
				switch rt := fd.Recv.List[0].Type.(type) {
				case *ast.StarExpr:
					name = "main.(*" + rt.X.(*ast.Ident).Name + ")." + fd.Name.Name
				case *ast.Ident:
					name = "main." + rt.Name + "." + fd.Name.Name
				}
			}
			out[name] = true
		}
	}
	return out
}

func TestAll(t *testing.T) {
	all, err := All(".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	healthy := 0
	for _, s := range all {
		names = append(names, s.Name)
		if s.Truth.Name != s.Name {
			t.Errorf("%s: truth name %q", s.Dir, s.Truth.Name)
		}
		if s.Truth.Healthy {
			healthy++
		}
		funcs := mainFuncs(t, s.Dir)
		for _, l := range s.Truth.Leaks {
			if l.Origin != "" {
				// Library goroutines: the user's frame is what the
				// sample defines.
				if !funcs[l.Origin] {
					t.Errorf("%s: declared origin %s is not defined in the sample", s.Name, l.Origin)
				}
				continue
			}
			if !funcs[l.Function] {
				t.Errorf("%s: declared function %s is not defined in the sample", s.Name, l.Function)
			}
			if l.Creator != "" && !funcs[l.Creator] {
				t.Errorf("%s: declared creator %s is not defined in the sample", s.Name, l.Creator)
			}
		}
	}
	if !slices.IsSorted(names) || len(names) < 11 || healthy < 3 {
		t.Errorf("All found %v (%d healthy), want at least 11 sorted samples with 3 healthy", names, healthy)
	}
}

func TestLoadNameMismatch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "other")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("bursty", TruthFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, TruthFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "does not match directory") {
		t.Errorf("Load with mismatched name: %v", err)
	}
	if _, err := Load(t.TempDir()); err == nil {
		t.Error("Load of a directory without leak.json succeeded")
	}
}

const goodLeak = `{"kind":"goroutine","pattern":"chan-send-no-receiver","function":"main.f","creator":"main.g","min_count_30s":1}`

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, "decode truth"},
		{`{"name":"x",`, "decode truth"},
		{`{"name":"x" "healthy":true}`, "offset 13"},
		{`{"name":"x","healthy":true,"leaks":[],"extra":1}`, "unknown field"},
		{`{"name":"x","healthy":true,"leaks":[]} {}`, "trailing data"},
		{`{"healthy":true,"leaks":[]}`, "empty name"},
		{`{"name":"x","healthy":false,"leaks":[]}`, "healthy is false but 0 leaks"},
		{`{"name":"x","healthy":true,"leaks":[` + goodLeak + `]}`, "healthy is true but 1 leaks"},
		{`{"name":"x","leaks":[` + strings.Replace(goodLeak, `"goroutine"`, `"disk"`, 1) + `]}`, `unknown kind "disk"`},
		{`{"name":"x","leaks":[` + strings.Replace(goodLeak, `chan-send-no-receiver`, `chan-send`, 1) + `]}`, `unknown pattern "chan-send"`},
		{`{"name":"x","leaks":[` + strings.Replace(goodLeak, `"main.g"`, `""`, 1) + `]}`, "without creator"},
		{`{"name":"x","leaks":[` + strings.Replace(goodLeak, `"goroutine"`, `"heap"`, 1) + `]}`, "heap leak with creator"},
		{`{"name":"x","leaks":[` + strings.Replace(goodLeak, `"main.f"`, `""`, 1) + `]}`, "empty function"},
		{`{"name":"x","leaks":[` + strings.Replace(goodLeak, `:1}`, `:0}`, 1) + `]}`, "not positive"},
	} {
		got, err := Parse(strings.NewReader(tc.in))
		if err == nil || got != nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, %v; want error containing %q", tc.in, got, err, tc.want)
		}
	}
	got, err := Parse(strings.NewReader(`{"name":"x","leaks":[` + goodLeak + `]}`))
	if err != nil || got.Leaks[0].Creator != "main.g" {
		t.Errorf("Parse(valid) = %+v, %v", got, err)
	}
}

func FuzzParse(f *testing.F) {
	for _, path := range []string{"timeout-send/leak.json", "cache-pin/leak.json", "bursty/leak.json"} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Parse(bytes.NewReader(data))
		if (got == nil) == (err == nil) {
			t.Fatalf("Parse = %v, %v: want exactly one of result and error", got, err)
		}
		if got != nil && got.Validate() != nil {
			t.Fatalf("Parse returned an invalid truth: %v", got.Validate())
		}
	})
}
