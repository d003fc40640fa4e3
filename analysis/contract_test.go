package analysis

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The JSON contract (docs/REPORT-JSON.md) says which fields of `report --format json`
// are always present and which only when known. The table between these
// markers is generated from the types' json tags (omitempty and omitzero
// fields are the optional ones); TestReadmeJSONFields fails when it is
// stale, and LEAKSCOPE_README_UPDATE=1 (the name is older than the page)
// rewrites it.
const (
	fieldsBegin = "<!-- json-fields:begin (generated from analysis/api_*.go by TestReadmeJSONFields) -->"
	fieldsEnd   = "<!-- json-fields:end -->"
)

func TestReadmeJSONFields(t *testing.T) {
	table := jsonFieldTable(reflect.TypeFor[Report]())
	const path = "../docs/REPORT-JSON.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	i, j := strings.Index(readme, fieldsBegin), strings.Index(readme, fieldsEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q block", path, fieldsBegin, fieldsEnd)
	}
	got := readme[i+len(fieldsBegin) : j]
	want := "\n" + table
	if got == want {
		return
	}
	if os.Getenv("LEAKSCOPE_README_UPDATE") != "" {
		if err := os.WriteFile(path, []byte(readme[:i+len(fieldsBegin)]+want+readme[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/REPORT-JSON.md's table of JSON fields is stale; run LEAKSCOPE_README_UPDATE=1 go test -run TestReadmeJSONFields ./analysis and review it. Generated:\n%s", table)
}

// jsonFieldTable lists, for every object of the JSON form of root (each
// type once, named by the first path that reaches it), its always-present
// and its optional fields.
func jsonFieldTable(root reflect.Type) string {
	var b strings.Builder
	b.WriteString("| object | always present | only when known (else left out) |\n|---|---|---|\n")
	seen := map[reflect.Type]bool{}
	type item struct {
		t    reflect.Type
		path string
	}
	queue := []item{{root, "(report)"}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if seen[it.t] {
			continue
		}
		seen[it.t] = true
		var always, optional []string
		for f := range it.t.Fields() {
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") {
				optional = append(optional, name)
			} else {
				always = append(always, name)
			}
			if et := objectType(f.Type); et != nil {
				p := it.path + "." + name
				if it.path == "(report)" {
					p = name
				}
				if k := f.Type.Kind(); k == reflect.Slice || k == reflect.Map {
					p += "[]"
				}
				queue = append(queue, item{et, p})
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", it.path, codeList(always), codeList(optional))
	}
	return b.String()
}

// objectType returns the struct type a field's JSON value is an object of
// (through pointers, slices and maps), nil for plain values and times.
func objectType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeFor[time.Time]() {
		return nil
	}
	return t
}

func codeList(names []string) string {
	if len(names) == 0 {
		return "—"
	}
	return "`" + strings.Join(names, "`, `") + "`"
}
