package dump

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// TestStackCache: the same frames get the same stack id whether their
// strings are the very same or equal copies, and frames that differ in a
// line or in being inlined get another.
func TestStackCache(t *testing.T) {
	w, err := bundle.Create(filepath.Join(t.TempDir(), "s.lsb"), bundle.NewManifest("s", "test"), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	fn, file := "main.worker", "/src/main.go"
	stack := func(fn, file string, line int64, inlined bool) []bundle.StackFrame {
		return []bundle.StackFrame{{Function: fn, File: file, Line: line, Inlined: inlined}, {Function: "main.main", File: file, Line: 3}}
	}
	var c stackCache
	id := func(frames []bundle.StackFrame) int64 {
		t.Helper()
		id, err := c.id(w, frames)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	a := id(stack(fn, file, 10, false))
	if b := id(stack(fn, file, 10, false)); b != a {
		t.Errorf("same strings: ids %d and %d", a, b)
	}
	copyFn, copyFile := strings.Clone(fn), strings.Clone(file)
	if b := id(stack(copyFn, copyFile, 10, false)); b != a {
		t.Errorf("equal copies: ids %d and %d", a, b)
	}
	for _, other := range [][]bundle.StackFrame{stack(fn, file, 11, false), stack(fn, file, 10, true)} {
		if b := id(other); b == a || b == 0 {
			t.Errorf("frames %v: id %d, want a new one (not %d)", other, b, a)
		}
	}
	if got := id(nil); got != 0 {
		t.Errorf("empty stack: id %d, want 0", got)
	}
}
