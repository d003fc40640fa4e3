package srclines

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// shop is a module with two programs and a library package of its own.
var shop = map[string]string{
	"go.mod": "module example.com/shop\n\ngo 1.22\n",
	"cmd/api/main.go": `package main

import (
	"database/sql"
	"net/http"

	"example.com/shop/store"
)

type server struct{}

func (s *server) report() {
	db, _ := sql.Open("mem", "")
	_ = db
	c := &http.Client{Transport: new(http.Transport)}
	_ = c
}

func shadow() {
	sql := struct{ Open func() }{}
	sql.Open()
}

func main() { store.Open[int]() }
`,
	"cmd/other/main.go": "package main\n\nimport \"database/sql\"\n\nfunc main() { sql.Open(\"a\", \"b\") }\n",
	"store/store.go": `package store

import (
	"database/sql"
	yaml "gopkg.in/yaml.v3"
)

func Open[T any]() *sql.DB { db, _ := sql.Open("a", "b"); return db }

var _, _ = yaml.Marshal(nil)
`,
	"store/store_test.go":     "package store\n\nimport (\n\t\"database/sql\"\n\t\"testing\"\n)\n\nfunc TestOpen(t *testing.T) { sql.Open(\"a\", \"b\") }\n",
	"store/x_test.go":         "package store_test\n\nimport \"example.com/shop/store\"\n\nfunc ExampleOpen() { store.Open[int]() }\n",
	"cmd/api/main_test.go":    "package main\n\nimport (\n\t\"database/sql\"\n\t\"testing\"\n)\n\nfunc TestReport(t *testing.T) { sql.Open(\"a\", \"b\") }\n",
	"store/testdata/x.go":     "package x\n\nimport \"database/sql\"\n\nfunc f() { sql.Open(\"\", \"\") }\n",
	"web/node_modules/x/x.go": "package x\n\nimport \"database/sql\"\n\nfunc f() { sql.Open(\"\", \"\") }\n",
	"tools/go.mod":            "module example.com/shop/tools\n",
	"tools/t.go":              "package tools\n\nimport \"database/sql\"\n\nfunc f() { sql.Open(\"\", \"\") }\n",
}

// TestIndexCalls indexes the calls of a program's module: its main
// package (not its test files) and the module's other packages, not
// another program's main package, a nested module, testdata or
// node_modules; a shadowed import name is not a call into the package;
// a second snapshot of the bundle adds nothing; CallsForBundle gives a
// bundle without an index the same rows.
func TestIndexCalls(t *testing.T) {
	root := writeShop(t)
	bdir := filepath.Join(t.TempDir(), "s.lsb")
	mem := memory.DefaultAllocator
	for round := 0; round < 2; round++ {
		w, err := bundle.Create(bdir, bundle.NewManifest("s", "test"), mem)
		if err != nil {
			t.Fatal(err)
		}
		w.StackID([]bundle.StackFrame{{Function: "main.main", File: filepath.Join(root, "cmd/api/main.go"), Line: 24}})
		if _, err := Snapshot(w, mem, Options{Source: "ingest"}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// A bundle without an index gets the same rows at report time, and
	// the bundle stays as it is.
	bare := filepath.Join(t.TempDir(), "bare.lsb")
	w, err := bundle.Create(bare, bundle.NewManifest("s", "test"), mem)
	if err != nil {
		t.Fatal(err)
	}
	w.StackID([]bundle.StackFrame{{Function: "main.main", File: filepath.Join(root, "cmd/api/main.go"), Line: 24}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(bare)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := CallsForBundle(b, mem, Options{Source: "report"})
	if err != nil {
		t.Fatal(err)
	}
	var atReport []string
	for _, r := range rows {
		atReport = append(atReport, strings.Join([]string{r.Kind, r.Callee, r.Function, strconv.FormatInt(r.Line, 10)}, " "))
	}
	sort.Strings(atReport)
	if left := readCalls(t, bare); len(left) != 0 {
		t.Errorf("CallsForBundle wrote %d rows into the bundle", len(left))
	}
	got := readCalls(t, bdir)
	if strings.Join(atReport, "\n") != strings.Join(got, "\n") {
		t.Errorf("at report time:\n%s\nin the bundle:\n%s", strings.Join(atReport, "\n"), strings.Join(got, "\n"))
	}
	want := []string{
		"call example.com/shop/store.Open main.main 24",
		"call database/sql.Open main.(*server).report 13",
		"call database/sql.Open example.com/shop/store.Open[...] 8",
		"call gopkg.in/yaml.v3.Marshal example.com/shop/store.init 10",
		"file example.com/shop  0",
		"file example.com/shop  0",
		"literal net/http.Client main.(*server).report 15",
		"literal net/http.Transport main.(*server).report 15",
	}
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// writeShop writes the shop module into a temporary directory and
// returns it.
func writeShop(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range shop {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// readCalls lists a bundle's source_calls rows as "kind callee function
// line", sorted.
func readCalls(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	b := &bundle.Bundle{Dir: dir}
	err := b.ReadTable(schema.TableSourceCalls, memory.DefaultAllocator, func(rec arrow.Record) error {
		col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
		fn, callee, kind := bundle.NewStrings(col(schema.ColFunction)), bundle.NewStrings(col(schema.ColCallee)), bundle.NewStrings(col(schema.ColKind))
		line := col(schema.ColLine).(*array.Int64)
		for i := 0; i < int(rec.NumRows()); i++ {
			out = append(out, strings.Join([]string{kind.Value(i), callee.Value(i), fn.Value(i), strconv.FormatInt(line.Value(i), 10)}, " "))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestIndexCallsTestBinary indexes a test binary's calls as the binary
// names its functions: the tested package by import path, main too, its
// test files with it (an external test package's with "_test"), and
// the module's other non-main packages without theirs.
func TestIndexCallsTestBinary(t *testing.T) {
	root := writeShop(t)
	store := []string{
		"call database/sql.Open example.com/shop/store.Open[...] 8",
		"call gopkg.in/yaml.v3.Marshal example.com/shop/store.init 10",
		"file example.com/shop  0",
	}
	for _, c := range []struct {
		name  string
		frame bundle.StackFrame
		want  []string
	}{
		{"a library package's test", bundle.StackFrame{Function: "example.com/shop/store.TestOpen", File: filepath.Join(root, "store/store_test.go"), Line: 8}, append([]string{
			"call database/sql.Open example.com/shop/store.TestOpen 8",
			"call example.com/shop/store.Open example.com/shop/store_test.ExampleOpen 5",
			"file example.com/shop  0",
			"file example.com/shop  0",
		}, store...)},
		{"a main package's test", bundle.StackFrame{Function: "example.com/shop/cmd/api.TestReport", File: filepath.Join(root, "cmd/api/main_test.go"), Line: 8}, append([]string{
			"call database/sql.Open example.com/shop/cmd/api.TestReport 8",
			"call database/sql.Open example.com/shop/cmd/api.(*server).report 13",
			"call example.com/shop/store.Open example.com/shop/cmd/api.main 24",
			"literal net/http.Client example.com/shop/cmd/api.(*server).report 15",
			"literal net/http.Transport example.com/shop/cmd/api.(*server).report 15",
			"file example.com/shop  0",
			"file example.com/shop  0",
		}, store...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "t.lsb")
			mem := memory.DefaultAllocator
			w, err := bundle.Create(dir, bundle.NewManifest("t", "test"), mem)
			if err != nil {
				t.Fatal(err)
			}
			w.StackID([]bundle.StackFrame{c.frame})
			if _, err := Snapshot(w, mem, Options{Source: "ingest"}); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(c.want)
			sort.Strings(want)
			if got := readCalls(t, dir); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
