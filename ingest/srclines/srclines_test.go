package srclines

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

func TestDeclNames(t *testing.T) {
	for sym, want := range map[string][]string{
		"main.main":                                {"main"},
		"main.worker.func1":                        {"worker"},
		"main.worker.func1.2":                      {"worker"},
		"main.(*controller).reconcile":             {"controller.reconcile"},
		"main.(*controller).reconcile.func3":       {"controller.reconcile"},
		"main.controller.reconcile":                {"controller.reconcile", "controller", "reconcile"},
		"github.com/a/b/pkg.(*List[...]).Push":     {"List.Push"},
		"github.com/a/b/pkg.Map[go.shape.int].Get": {"Map.Get", "Map", "Get"},
		"k8s.io/client-go/tools/cache.New":         {"New"},
		"main.init.0":                              {"init"},
		"main.run.gowrap1":                         {"run"},
		"x/raft.(*state).start.(*state).handleWriteResponse.(*state).processCommittedEntry.func1": {
			"state.start", "state.handleWriteResponse", "state.processCommittedEntry"},
		"main.TestX.poller.func3.1": {"TestX.poller", "TestX", "poller"},
		"nodot":                     nil,
	} {
		if got := DeclNames(sym); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", sym, got, want)
		}
	}
}

const src = `package main

import "time"

type controller struct{ ch chan int }

// reconcile does the work.
func (c *controller) reconcile() {
	go func() {
		c.ch <- 1
	}()
}

func ticker() {
	for range time.Tick(time.Second) {
	}
}
`

// TestSnapshot records the functions of a bundle's frames: declarations
// found (with their text and the file's hash), a function the file does
// not declare, a file that is gone; the Go root's files are left out and a
// second call adds only new functions.
func TestSnapshot(t *testing.T) {
	dir := t.TempDir()
	goFile := filepath.Join(dir, "main.go")
	os.WriteFile(goFile, []byte(src), 0o644)
	sum := sha256.Sum256([]byte(src))
	bdir := filepath.Join(t.TempDir(), "s.lsb")
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	w, err := bundle.Create(bdir, bundle.NewManifest("s", "test"), mem)
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 the root srclines reads the standard library from
	goroot := filepath.ToSlash(runtime.GOROOT())
	w.StackID([]bundle.StackFrame{
		{Function: "runtime.gopark", File: goroot + "/src/runtime/proc.go", Line: 400},
		{Function: "main.(*controller).reconcile.func1", File: goFile, Line: 10},
		{Function: "main.(*controller).reconcile", File: goFile, Line: 9},
		{Function: "main.gone", File: goFile, Line: 3},
		{Function: "main.elsewhere", File: filepath.Join(dir, "missing.go"), Line: 7},
	})
	snap := New(Options{Source: "ingest"})
	st, err := snap.Snapshot(w, mem)
	if err != nil {
		t.Fatal(err)
	}
	if st.OK != 2 || st.Changed != 1 || st.Unavailable != 1 || len(st.Missing) != 2 || !strings.HasPrefix(st.Missing[1], "main.elsewhere (") {
		t.Errorf("stats %+v", st)
	}
	w.StackID([]bundle.StackFrame{{Function: "main.ticker", File: goFile, Line: 15}})
	if st, _ := snap.Snapshot(w, mem); st.OK != 1 || st.Changed+st.Unavailable != 0 {
		t.Errorf("second call: %+v, want only main.ticker", st)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Adding to the bundle later records nothing twice.
	w, err = bundle.Create(bdir, bundle.Manifest{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := Snapshot(w, mem, Options{Source: "ingest"}); st.OK+st.Changed+st.Unavailable != 0 {
		t.Errorf("reopened bundle: %+v, want nothing new", st)
	}
	w.Close()
	rows := readRows(t, bdir, mem)
	if len(rows) != 5 {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	rec := rows["main.(*controller).reconcile"]
	if rec.Status != schema.SourceOK || rec.StartLine != 8 || rec.EndLine != 12 || !strings.HasPrefix(rec.Text, "func (c *controller) reconcile() {") || rec.FileSHA256 != hex.EncodeToString(sum[:]) || rec.Source != "ingest" {
		t.Errorf("reconcile: %+v", rec)
	}
	if c := rows["main.(*controller).reconcile.func1"]; c.StartLine != 8 || c.Text != rec.Text {
		t.Errorf("closure: %+v", c)
	}
	if g := rows["main.gone"]; g.Status != schema.SourceChanged || !strings.Contains(g.Detail, "no declaration of main.gone") {
		t.Errorf("gone: %+v", g)
	}
	if m := rows["main.elsewhere"]; m.Status != schema.SourceUnavailable || !strings.Contains(m.Detail, "no such file") {
		t.Errorf("missing file: %+v", m)
	}
	if _, ok := rows["runtime.gopark"]; ok {
		t.Error("a Go root file was snapshotted")
	}
}

func readRows(t *testing.T, dir string, mem memory.Allocator) map[string]schema.SourceCode {
	t.Helper()
	out := map[string]schema.SourceCode{}
	b := &bundle.Bundle{Dir: dir}
	err := b.ReadTable(schema.TableSourceCode, mem, func(rec arrow.Record) error {
		col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
		file, fn, status, source := bundle.NewStrings(col(schema.ColFile)), bundle.NewStrings(col(schema.ColFunction)), bundle.NewStrings(col(schema.ColStatus)), bundle.NewStrings(col(schema.ColSource))
		start, end := col(schema.ColStartLine).(*array.Int64), col(schema.ColEndLine).(*array.Int64)
		text, sha, detail := col(schema.ColText).(*array.String), col(schema.ColFileSHA256).(*array.String), col(schema.ColDetail).(*array.String)
		for i := 0; i < int(rec.NumRows()); i++ {
			out[fn.Value(i)] = schema.SourceCode{File: file.Value(i), Function: fn.Value(i), StartLine: start.Value(i), EndLine: end.Value(i),
				Text: text.Value(i), FileSHA256: sha.Value(i), Status: status.Value(i), Detail: detail.Value(i), Source: source.Value(i)}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSnapshotKeepsNothingOfOtherFiles: a frame may name any path. A
// hidden file named ".go" (which the go command never builds) is not
// read, and of a .go file that does not declare the frame's function
// (one that does not parse, one of other code) neither text nor hash is
// kept.
func TestSnapshotKeepsNothingOfOtherFiles(t *testing.T) {
	dir := t.TempDir()
	hidden := filepath.Join(dir, ".go")
	os.WriteFile(hidden, []byte("package main\n\nfunc secret() {}\n"), 0o644)
	junk := filepath.Join(dir, "notes.go")
	os.WriteFile(junk, []byte("password: hunter2\n"), 0o644)
	other := filepath.Join(dir, "other.go")
	os.WriteFile(other, []byte("package main\n\nfunc unrelated() {}\n"), 0o644)
	bdir := filepath.Join(t.TempDir(), "s.lsb")
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	w, err := bundle.Create(bdir, bundle.NewManifest("s", "test"), mem)
	if err != nil {
		t.Fatal(err)
	}
	w.StackID([]bundle.StackFrame{{Function: "main.secret", File: hidden, Line: 3}, {Function: "main.a", File: junk, Line: 1}, {Function: "main.b", File: other, Line: 3}})
	if _, err := Snapshot(w, mem, Options{Source: "ingest"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rows := readRows(t, bdir, mem)
	if r, ok := rows["main.secret"]; ok {
		t.Errorf("a file named .go was read: %+v", r)
	}
	for _, fn := range []string{"main.a", "main.b"} {
		if r := rows[fn]; r.Status != schema.SourceChanged || r.FileSHA256 != "" || r.Text != "" {
			t.Errorf("%s: %+v, want changed with no hash or text", fn, r)
		}
	}
}
