package analysis

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
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
