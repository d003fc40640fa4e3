package analysis

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// pool is a library package: Open reaches the go statement in openDB
// through a package function; a Pool is made by a literal, by New, and
// by the package's own Default.
const pool = `package pool

type Pool struct{ n int }

var Default = &Pool{}

func Open() *Pool { return openDB() }

func openDB() *Pool { p := &Pool{}; go p.reap(); return p }

func New() *Pool { return &Pool{} }

func (p *Pool) Start() { go p.reap() }

func (p *Pool) reap() {}

func Unrelated() {}
`

// TestSourceEntries reads what reaches a library function and what makes
// a library type from the package source.
func TestSourceEntries(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pool.go"), []byte(pool), 0o644); err != nil {
		t.Fatal(err)
	}
	p := parseLibPkg(dir)
	keys := func(m map[string]bool) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	// openDB is reached from Open (by name), and from no other
	// exported function; New makes a Pool but does not reach openDB.
	if got, want := keys(p.entriesReaching("openDB", "example.com/pool")), []string{"call example.com/pool.Open"}; !slices.Equal(got, want) {
		t.Errorf("entries reaching openDB: %v, want %v", got, want)
	}
	if got, want := keys(p.makersOf("Pool", "example.com/pool")), []string{"call example.com/pool.New", "call example.com/pool.Open", "literal example.com/pool.Pool"}; !slices.Equal(got, want) {
		t.Errorf("makers of Pool: %v, want %v", got, want)
	}
	own := p.ownValues("Pool", "example.com/pool")
	if len(own) != 1 || own[0].function != "example.com/pool.Default" {
		t.Errorf("the package's own Pools: %+v, want Default", own)
	}
}

// TestSourceOriginIsTheUsers checks that the origin from the call index
// is a function of the user's code, the only candidate: never a value
// of the library's own, never one of several, never from a partial
// index.
func TestSourceOriginIsTheUsers(t *testing.T) {
	// A module cache path: library source trusted as what was built.
	dir := filepath.Join(t.TempDir(), "pkg", "mod", "example.com", "pool@v1.0.0")
	file := filepath.Join(dir, "pool.go")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(pool), 0o644); err != nil {
		t.Fatal(err)
	}
	user := sourceCall{file: "/src/svc/main.go", function: "main.handle", line: 12, callee: "example.com/pool.New", kind: "call"}
	other := sourceCall{file: "/src/svc/main.go", function: "main.init", line: 3, callee: "example.com/pool.Open", kind: "call"}
	for _, c := range []struct {
		name    string
		creator string
		calls   []sourceCall
		partial bool
		want    string
	}{
		{"a maker beside the library's own", "example.com/pool.(*Pool).Start", []sourceCall{user}, false, ""},
		{"only the library's own", "example.com/pool.(*Pool).Start", []sourceCall{{file: "/src/svc/main.go", function: "main.log", line: 20, callee: "example.com/pool.Unrelated", kind: "call"}}, false, ""},
		{"a call that does not reach it", "example.com/pool.openDB", []sourceCall{user, other}, false, "main.init"},
		{"the only caller", "example.com/pool.openDB", []sourceCall{other}, false, "main.init"},
		{"two callers", "example.com/pool.openDB", []sourceCall{other, {file: "/src/svc/a.go", function: "main.a", line: 4, callee: "example.com/pool.Open", kind: "call"}}, false, ""},
		{"a partial index", "example.com/pool.openDB", []sourceCall{other}, true, ""},
		{"no index", "example.com/pool.openDB", nil, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := sourceFixture(file, c.creator, c.calls, c.partial)
			o, _ := callerInSource(in, in.sites[0])
			got := ""
			if o != nil {
				got = o.Function
			}
			if got != c.want {
				t.Errorf("origin %q, want %q", got, c.want)
			}
		})
	}
}

// sourceFixture is a loaded bundle with one site, created by creator
// (whose frame is in file), and a call index of calls.
func sourceFixture(file, creator string, calls []sourceCall, partial bool) *loaded {
	st := &stackTable{frames: map[int64]Frame{1: {Function: creator, File: file, Line: 9}}, stacks: map[int64][]int64{7: {1}}}
	src := &sourceCode{calls: calls, callFiles: map[string]int{}, callsPartial: partial}
	if len(calls) > 0 {
		src.callFiles["example.com/svc"] = 2
	}
	return &loaded{b: &bundle.Bundle{}, st: st, src: src, sites: []*site{{creator: creator, creatorStackID: 7}}}
}
