package bundletest

import (
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// Builder writes a synthetic bundle row by row for a test; every method
// fails the test on an error, so a test's setup cannot quietly write less
// than it says.
type Builder struct {
	t testing.TB
	// W is the bundle's writer, for what the methods do not cover.
	W *bundle.Writer
	// Dir is the bundle's directory.
	Dir string
}

// New creates the bundle dir with manifest m.
func New(t testing.TB, dir string, m bundle.Manifest, mem memory.Allocator) *Builder {
	t.Helper()
	w, err := bundle.Create(dir, m, mem)
	if err != nil {
		t.Fatal(err)
	}
	return &Builder{t: t, W: w, Dir: dir}
}

// Stack interns a stack of frames, leaf first, and returns its id.
func (b *Builder) Stack(frames ...bundle.StackFrame) int64 {
	b.t.Helper()
	id, err := b.W.StackID(frames)
	if err != nil {
		b.t.Fatal(err)
	}
	return id
}

// Add appends rows to their tables.
func (b *Builder) Add(rows ...schema.Row) {
	b.t.Helper()
	for _, r := range rows {
		if err := b.W.Append(r); err != nil {
			b.t.Fatal(err)
		}
	}
}

// Raw stores body as the raw artifact name and returns its path in the
// bundle.
func (b *Builder) Raw(name, body string) string {
	b.t.Helper()
	rel, _, err := b.W.CopyRaw(name, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	return rel
}

// Flush writes the rows appended so far as one batch per table.
func (b *Builder) Flush() {
	b.t.Helper()
	if err := b.W.Flush(); err != nil {
		b.t.Fatal(err)
	}
}

// Close finishes the bundle and returns its directory.
func (b *Builder) Close() string {
	b.t.Helper()
	if err := b.W.Close(); err != nil {
		b.t.Fatal(err)
	}
	return b.Dir
}

// Open finishes the bundle and opens it for reading.
func (b *Builder) Open() *bundle.Bundle {
	b.t.Helper()
	bb, err := bundle.Open(b.Close())
	if err != nil {
		b.t.Fatal(err)
	}
	return bb
}
