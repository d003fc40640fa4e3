package bundle

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/schema"
)

func TestWriteRead(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := filepath.Join(t.TempDir(), "b.lsb")
	sid := writeHundredGoroutines(t, dir, mem)
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	checkGoidSum(t, b, mem)

	// Adding to the bundle keeps old rows and dictionaries.
	checkReopenKeepsRows(t, b, sid, mem)

	// An aborted writer leaves the bundle as it was.
	checkAbortLeavesBundle(t, b, mem)
}

// leafStack is the one stack TestWriteRead's goroutines share.
var leafStack = []StackFrame{{Function: "main.leaf", File: "a.go", Line: 3}, {Function: "main.main", File: "a.go", Line: 9}}

// writeHundredGoroutines creates the bundle dir with 100 goroutines (goids
// 1..100) on leafStack, checks the stack is interned once as id 1, and
// returns that id.
func writeHundredGoroutines(t *testing.T, dir string, mem memory.Allocator) int64 {
	t.Helper()
	w, err := Create(dir, NewManifest("id1", "test"), mem)
	if err != nil {
		t.Fatal(err)
	}
	sid, err := w.StackID(leafStack)
	if err != nil {
		t.Fatal(err)
	}
	sid2, _ := w.StackID(leafStack)
	if sid != sid2 || sid != 1 {
		t.Fatalf("stack ids %d %d, want 1 1", sid, sid2)
	}
	for i := 0; i < 100; i++ {
		w.Append(schema.Goroutine{SnapshotTS: 1e18, Goid: int64(i + 1), State: "chan send", StackID: sid, Source: "raw/x"})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return sid
}

// checkGoidSum reads the goroutines table back and checks the goids sum to
// 1+…+100 and every state survived the dictionary.
func checkGoidSum(t *testing.T, b *Bundle, mem memory.Allocator) {
	t.Helper()
	var sum int64
	err := b.ReadTable(schema.TableGoroutines, mem, func(rec arrow.Record) error {
		g := rec.Column(1).(*array.Int64)
		st := NewStrings(rec.Column(2))
		for i := 0; i < g.Len(); i++ {
			sum += g.Value(i)
			if st.Value(i) != "chan send" {
				t.Errorf("state %q", st.Value(i))
			}
		}
		return nil
	})
	if err != nil || sum != 5050 {
		t.Fatalf("sum %d err %v", sum, err)
	}
}

// checkReopenKeepsRows reopens b's directory for writing, checks the stack
// dictionary gives leafStack its old id sid, appends one goroutine and
// checks the old rows are still there.
func checkReopenKeepsRows(t *testing.T, b *Bundle, sid int64, mem memory.Allocator) {
	t.Helper()
	w, err := Create(b.Dir, Manifest{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	sid3, _ := w.StackID(leafStack)
	if sid3 != sid {
		t.Fatalf("reopened stack id %d, want %d", sid3, sid)
	}
	w.Append(schema.Goroutine{SnapshotTS: 2e18, Goid: 1000, State: "select"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tables, err := b.Tables(mem)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int64{}
	for _, ti := range tables {
		rows[ti.Name] = ti.Rows
	}
	if rows[schema.TableGoroutines] != 101 || rows[schema.TableStacks] != 1 || rows[schema.TableFrames] != 2 {
		t.Fatalf("rows %v", rows)
	}
}

// checkAbortLeavesBundle writes rows with a writer it then aborts and checks
// b still has its 101 goroutines and no metrics table.
func checkAbortLeavesBundle(t *testing.T, b *Bundle, mem memory.Allocator) {
	t.Helper()
	w, _ := Create(b.Dir, Manifest{}, mem)
	w.Append(schema.Goroutine{SnapshotTS: 3e18, Goid: 7, State: "select"})
	w.Append(schema.Metric{TS: 3e18, Name: "x", Value: 1})
	w.Flush()
	w.Abort()
	tables, _ := b.Tables(mem)
	for _, ti := range tables {
		if ti.Name == schema.TableGoroutines && ti.Rows != 101 {
			t.Fatalf("after abort goroutines has %d rows", ti.Rows)
		}
		if ti.Name == schema.TableMetrics {
			t.Fatalf("after abort metrics table still exists")
		}
	}
}

// TestTruncatedTable cuts a table file mid-batch, as SIGKILL during a
// write would, and checks that every complete batch still reads.
func TestTruncatedTable(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	w, err := Create(filepath.Join(t.TempDir(), "c.lsb"), NewManifest("id", "test"), mem)
	if err != nil {
		t.Fatal(err)
	}
	for batch := 0; batch < 3; batch++ {
		for i := 0; i < 10; i++ {
			w.Append(schema.Metric{TS: int64(batch*10 + i + 1), Name: "m", Value: 1})
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	path := tablePath(w.Dir(), schema.TableMetrics)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data[:len(data)-40], 0o644); err != nil {
		t.Fatal(err)
	}
	b := &Bundle{Dir: w.Dir()}
	var rows int64
	err = b.ReadTable(schema.TableMetrics, mem, func(rec arrow.Record) error { rows += rec.NumRows(); return nil })
	var pe *PartialError
	if !errors.As(err, &pe) || rows != 20 || pe.ValidRows != 20 {
		t.Fatalf("rows %d err %v; want 20 rows and a PartialError", rows, err)
	}
	w.Abort()
}

// TestOlderBundle adds rows to a bundle written before the goroutines
// table had its frame_args column (testdata/older.lsb, the dump tables of
// a sample bundle recorded then): it
// validates before and after, the old rows read back with null frame
// args, the new row with its own.
func TestOlderBundle(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := filepath.Join(t.TempDir(), "old.lsb")
	if err := os.CopyFS(dir, os.DirFS("testdata/older.lsb")); err != nil {
		t.Fatal(err)
	}
	if _, err := Validate(dir); err != nil {
		t.Fatalf("older bundle refused: %v", err)
	}
	oldRows, withArgs := goroutineArgs(t, dir, mem)
	if oldRows == 0 || withArgs != 0 {
		t.Fatalf("the sample bundle has %d goroutine rows, %d with frame args: not an older bundle", oldRows, withArgs)
	}
	w, err := Create(dir, Manifest{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	sid, err := w.StackID([]StackFrame{{Function: "main.f", File: "a.go", Line: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(schema.Goroutine{SnapshotTS: 2e18, Goid: 7, State: "chan send", StackID: sid, Source: "raw/new", FrameArgs: []string{"0xc000012340"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Validate(dir); err != nil {
		t.Fatalf("widened bundle refused: %v", err)
	}
	rows, withArgs := goroutineArgs(t, dir, mem)
	if rows != oldRows+1 || withArgs != 1 {
		t.Errorf("after adding a row: %d rows (%d with frame args), want %d (1)", rows, withArgs, oldRows+1)
	}
}

// goroutineArgs counts the goroutine rows of the bundle in dir and those
// whose frame_args is not null.
func goroutineArgs(t *testing.T, dir string, mem memory.Allocator) (rows, withArgs int64) {
	t.Helper()
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	err = b.ReadTable(schema.TableGoroutines, mem, func(rec arrow.Record) error {
		rows += rec.NumRows()
		ix := rec.Schema().FieldIndices(schema.ColFrameArgs)
		if len(ix) == 0 {
			return nil
		}
		col := rec.Column(ix[0])
		withArgs += int64(col.Len() - col.NullN())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows, withArgs
}

// TestInterruptedOnRead: a bundle whose sources still say "running" reads
// as interrupted once its writer stopped flushing, with the time of the
// last flush; while flushes are recent it reads as still being written.
func TestInterruptedOnRead(t *testing.T) {
	last := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	m := Manifest{Sources: []Source{{Kind: SourceDump, Status: StatusRunning}, {Kind: SourceEBPF, Status: StatusUnavailable}}, LastFlush: last}
	old := m
	old.Sources = append([]Source(nil), m.Sources...)
	old.markInterrupted(last.Add(time.Minute))
	if s := old.Sources[0]; s.Status != StatusInterrupted || s.Detail != "last flush at 2026-05-06T07:08:09Z" {
		t.Errorf("a minute after the last flush: %+v", s)
	}
	if s := old.Sources[1]; s.Status != StatusUnavailable {
		t.Errorf("other source changed: %+v", s)
	}
	live := m
	live.Sources = append([]Source(nil), m.Sources...)
	live.markInterrupted(last.Add(time.Second))
	if s := live.Sources[0]; s.Status != StatusRunning || !strings.Contains(s.Detail, "still being written") {
		t.Errorf("a second after the last flush: %+v", s)
	}
	// Written before last_flush existed: the latest artifact says when.
	pre := Manifest{Sources: []Source{{Kind: SourceDump, Status: StatusRunning}}, Artifacts: []Artifact{{Time: last}, {Time: last.Add(-time.Hour)}}}
	pre.markInterrupted(time.Now())
	if s := pre.Sources[0]; s.Status != StatusInterrupted || s.Detail != "last artifact at 2026-05-06T07:08:09Z" {
		t.Errorf("without last_flush: %+v", s)
	}
}

// TestWriterKeepsRunning: a writer starts from the manifest as stored, not
// as a reader sees it: a new capture's sources (nothing flushed yet) and
// a bundle added to later stay "running" in the file until the writer
// says otherwise, so a capture that ends well ends "complete".
func TestWriterKeepsRunning(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r.lsb")
	m := NewManifest("r", "test")
	m.Sources = []Source{{Kind: SourceDump, Status: StatusRunning}}
	w, err := Create(dir, m, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	if s := w.Manifest().Sources[0]; s.Status != StatusRunning || s.Detail != "" {
		t.Errorf("new bundle's writer sees %+v, want running", s)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w, err = Begin(dir, Manifest{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	if s := w.Manifest().Sources[0]; s.Status != StatusRunning || s.Detail != "" {
		t.Errorf("adding to it sees %+v, want running", s)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	stored, err := readStoredManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s := stored.Sources[0]; s.Status != StatusRunning || s.Detail != "" {
		t.Errorf("stored source %+v, want running as written", s)
	}
	read, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s := read.Sources[0]; s.Status != StatusInterrupted {
		t.Errorf("a reader sees %+v, want interrupted (nothing flushed, writer gone)", s)
	}
}

// TestRecordFlushes: a recording writer notes its flushes in the manifest.
func TestRecordFlushes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r.lsb")
	w, err := Create(dir, NewManifest("r", "test"), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	w.RecordFlushes()
	before := time.Now()
	if err := w.Append(schema.ClockSync{MonoNS: 1, TS: 2, Source: "capture"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.LastFlush.Before(before) {
		t.Errorf("last flush %v, before the flush at %v", m.LastFlush, before)
	}
	w.Close()
}

// TestOlderTraceGoroutines reads and extends a trace_goroutines table
// written before schema 2 dropped its monotonic-time columns (a committed
// sample bundle): readers get the current columns, in order, with the
// stored values, and a transaction that adds a row rewrites the table
// without the dropped columns, in the stored form of the current schema
// (its times as deltas).
func TestOlderTraceGoroutines(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := filepath.Join(t.TempDir(), "old.lsb")
	if err := os.CopyFS(dir, os.DirFS("../../cmd/leakscope/bundles/operator-sim.lsb")); err != nil {
		t.Fatal(err)
	}
	path := tablePath(dir, schema.TableTraceGoroutines)
	stored := storedColumns(t, path, mem)
	if !slices.Contains(stored, schema.ColCreatedMonoNS) {
		t.Fatalf("the sample's trace_goroutines has columns %v: not an older table", stored)
	}
	if _, err := Validate(dir); err != nil {
		t.Fatalf("older bundle refused: %v", err)
	}
	want := schema.TraceGoroutinesSchema
	rows, goids := traceGoids(t, dir, mem, want)
	if rows == 0 {
		t.Fatal("no trace goroutine rows")
	}
	w, err := Create(dir, Manifest{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(schema.TraceGoroutine{Goid: 1 << 40, CreatedTS: 2e18, StartFunction: "main.f", LastState: "running"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	stored3 := fieldNames(schema.StoredSchema(schema.TableTraceGoroutines))
	if got := storedColumns(t, path, mem); !slices.Equal(got, stored3) {
		t.Errorf("rewritten table has columns %v, want %v", got, stored3)
	}
	rows2, goids2 := traceGoids(t, dir, mem, want)
	if rows2 != rows+1 || goids2 != goids+1<<40 {
		t.Errorf("after adding a row: %d rows, goid sum %d; want %d, %d", rows2, goids2, rows+1, goids+1<<40)
	}
}

// storedColumns returns the column names of the table file at path as
// stored.
func storedColumns(t *testing.T, path string, mem memory.Allocator) []string {
	t.Helper()
	var names []string
	err := readStream(path, nil, mem, func(rec arrow.Record) error {
		names = fieldNames(rec.Schema())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func fieldNames(sc *arrow.Schema) []string {
	var names []string
	for _, f := range sc.Fields() {
		names = append(names, f.Name)
	}
	return names
}

// traceGoids reads trace_goroutines, checks every record has want's
// columns in order, and returns the rows and the sum of their goids.
func traceGoids(t *testing.T, dir string, mem memory.Allocator, want *arrow.Schema) (rows, sum int64) {
	t.Helper()
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	err = b.ReadTable(schema.TableTraceGoroutines, mem, func(rec arrow.Record) error {
		if got := fieldNames(rec.Schema()); !slices.Equal(got, fieldNames(want)) {
			t.Fatalf("read columns %v, want %v", got, fieldNames(want))
		}
		for _, g := range rec.Column(0).(*array.Int64).Int64Values() {
			sum += g
		}
		rows += rec.NumRows()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows, sum
}
