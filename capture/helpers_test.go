package capture

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/samples"
)

func TestMain(m *testing.M) {
	if js := os.Getenv(childEnv); js != "" {
		os.Exit(captureChild(js))
	}
	code := m.Run()
	samples.Cleanup()
	os.Exit(code)
}

// startSample runs samples/NAME and stops it when the test ends.
func startSample(t testing.TB, name string, args ...string) *samples.Process {
	t.Helper()
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p, err := samples.Start(ctx, filepath.Join(root, name), args...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop()
		cancel()
	})
	return p
}

func hasFunc(fns []string, sub string) bool {
	for _, f := range fns {
		if strings.Contains(f, sub) {
			return true
		}
	}
	return false
}

// readRows calls fn for every row index of every batch of table; a table
// cut short by a kill is read up to its last complete batch.
func readRows(t testing.TB, b *bundle.Bundle, table string, mem memory.Allocator, fn func(rec arrow.Record, i int)) {
	t.Helper()
	err := b.ReadTable(table, mem, func(rec arrow.Record) error {
		for i := 0; i < int(rec.NumRows()); i++ {
			fn(rec, i)
		}
		return nil
	})
	if _, ok := err.(*bundle.PartialError); err != nil && !ok {
		t.Fatalf("read %s: %v", table, err)
	}
}

// col returns the column of rec by name.
func col(t testing.TB, rec arrow.Record, name string) arrow.Array {
	t.Helper()
	idx := rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		t.Fatalf("table has no column %q", name)
	}
	return rec.Column(idx[0])
}

func i64At(a arrow.Array, i int) int64 {
	switch c := a.(type) {
	case *array.Int64:
		if c.IsNull(i) {
			return 0
		}
		return c.Value(i)
	case *array.Timestamp:
		if c.IsNull(i) {
			return 0
		}
		return int64(c.Value(i))
	}
	return 0
}

// source returns the manifest source of kind, or fails.
func source(t testing.TB, m bundle.Manifest, kind string) bundle.Source {
	t.Helper()
	for _, s := range m.Sources {
		if s.Kind == kind {
			return s
		}
	}
	t.Fatalf("manifest has no %s source: %+v", kind, m.Sources)
	return bundle.Source{}
}

func isRoot() bool { return os.Geteuid() == 0 }
