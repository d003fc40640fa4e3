package web

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/dev/bundletest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// TestLazyRetriesFailures checks that neither an error nor a panic is
// kept: the next call computes again, and a success is kept.
func TestLazyRetriesFailures(t *testing.T) {
	var l lazy[int]
	calls := 0
	fns := []func() (int, error){
		func() (int, error) { return 0, errors.New("disk hiccup") },
		func() (int, error) { panic("bad input") },
		func() (int, error) { return 42, nil },
		func() (int, error) { return 7, nil },
	}
	get := func() (int, error) {
		return l.get(func() (int, error) { f := fns[calls]; calls++; return f() })
	}
	if _, err := get(); err == nil {
		t.Fatal("error lost")
	}
	if _, err := get(); err == nil || err.Error() != "internal error: bad input" {
		t.Fatalf("panic gave %v", err)
	}
	for range 2 {
		if v, err := get(); v != 42 || err != nil {
			t.Fatalf("got %d, %v; want the first success kept", v, err)
		}
	}
	if calls != 3 {
		t.Errorf("%d computations, want 3", calls)
	}
}

// TestAnswerCachePanics checks that a panicking answer is a 500, not kept.
func TestAnswerCachePanics(t *testing.T) {
	a := answerCache{max: 4}
	body, status := a.get("k", func() ([]byte, int) { panic("render failed") })
	if status != 500 || len(body) == 0 {
		t.Fatalf("panic answered %d %q", status, body)
	}
	if body, status := a.get("k", func() ([]byte, int) { return []byte("ok"), 200 }); status != 200 || string(body) != "ok" {
		t.Fatalf("after a panic: %d %q, want a fresh computation", status, body)
	}
	if _, status := a.get("k", func() ([]byte, int) { return nil, 599 }); status != 200 {
		t.Fatalf("a kept success was recomputed (%d)", status)
	}
}

// TestHostileNamesReport serves the reports of a capture whose function
// names hold NUL, HTML and backticks: every format answers 200, twice,
// with no NUL and, outside Markdown code spans, none of the names' HTML
// unescaped (report/hostile_test.go checks the Markdown rendered).
func TestHostileNamesReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "evil.lsb")
	w := bundletest.New(t, dir, bundle.NewManifest("evil", "test"), memory.DefaultAllocator)
	sid := w.Stack(bundle.StackFrame{Function: "main.evil\x00<script>x</script>`y`", File: "/src/\x00<b>.go", Line: 4})
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	for s := range 4 {
		for i := range 10 * (s + 1) {
			w.Add(schema.Goroutine{SnapshotTS: t0.Add(time.Duration(s) * time.Minute).UnixNano(), Goid: int64(i + 1), State: "chan send", StackID: sid, CreatorFunction: "main.\x00spawn", Source: "d"})
		}
	}
	w.W.Update(func(m *bundle.Manifest) { m.Source(bundle.SourceDump); m.Widen(t0); m.Widen(t0.Add(3 * time.Minute)) })
	w.Close()
	var buf bytes.Buffer
	if err := bundle.Pack(dir, &buf, bundle.FormatTarZstd); err != nil {
		t.Fatal(err)
	}
	_, h := newServer(t, Options{})
	var up map[string]string
	if rec := do(t, h, "POST", "/api/captures", buf.Bytes(), &up); rec.Code != 201 {
		t.Fatalf("upload: %d %s", rec.Code, rec.Body)
	}
	for _, f := range []string{"html", "md", "json", "html&postmortem=1", "md&postmortem=1"} {
		for try := range 2 {
			rec := do(t, h, "GET", "/api/captures/"+up["id"]+"/report?format="+f, nil, nil)
			body := rec.Body.String()
			// Markdown may show the name inside a code span, where it is text.
			rawHTML := !strings.HasPrefix(f, "md") && strings.Contains(body, "<script>")
			if rec.Code != 200 || rawHTML || strings.Contains(body, "\x00") {
				t.Errorf("format %s, try %d: %d %.300q", f, try, rec.Code, body)
			}
		}
	}
}
