package dump

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// readRows reads the goroutines table of the bundle in dir back as rows.
func readRows(t *testing.T, dir string, mem memory.Allocator) ([]schema.Goroutine, map[int64]schema.Frame, map[int64][]int64) {
	t.Helper()
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	frames := map[int64]schema.Frame{}
	stacks := map[int64][]int64{}
	if err := b.Frames(mem, func(f schema.Frame) { frames[f.ID] = f }); err != nil {
		t.Fatal(err)
	}
	if err := b.Stacks(mem, func(s schema.Stack) { stacks[s.ID] = s.FrameIDs }); err != nil {
		t.Fatal(err)
	}
	var rows []schema.Goroutine
	err = b.ReadTable(schema.TableGoroutines, mem, func(rec arrow.Record) error {
		c := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
		ts := c(schema.ColSnapshotTS).(*array.Timestamp)
		goid := c(schema.ColGoid).(*array.Int64)
		state := bundle.NewStrings(c(schema.ColState))
		wait := c(schema.ColWaitMinutes).(*array.Int64)
		locked := c(schema.ColLockedThread).(*array.Boolean)
		stack := c(schema.ColStackID).(*array.Int64)
		cgoid := c(schema.ColCreatorGoid).(*array.Int64)
		cfn := bundle.NewStrings(c(schema.ColCreatorFunction))
		cstack := c(schema.ColCreatorStackID).(*array.Int64)
		labels := bundle.NewStrings(c(schema.ColLabels))
		elided := c(schema.ColFramesElided).(*array.Boolean)
		source := bundle.NewStrings(c(schema.ColSource))
		args := c(schema.ColFrameArgs).(*array.List)
		argWords := args.ListValues().(*array.String)
		for i := 0; i < int(rec.NumRows()); i++ {
			var fa []string
			if args.IsValid(i) {
				from, to := args.ValueOffsets(i)
				for j := from; j < to; j++ {
					fa = append(fa, argWords.Value(int(j)))
				}
			}
			rows = append(rows, schema.Goroutine{
				SnapshotTS: int64(ts.Value(i)), Goid: goid.Value(i), State: state.Value(i),
				WaitMinutes: wait.Value(i), LockedThread: locked.Value(i), StackID: stack.Value(i),
				CreatorGoid: cgoid.Value(i), CreatorFunction: cfn.Value(i), CreatorStackID: cstack.Value(i),
				Labels: labels.Value(i), FramesElided: elided.Value(i), Source: source.Value(i), FrameArgs: fa,
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows, frames, stacks
}

func ingestBytes(t *testing.T, data []byte, a *bundle.Artifact, mem memory.Allocator) (string, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "b.lsb")
	w, err := bundle.Create(dir, bundle.NewManifest("test", "test"), mem)
	if err != nil {
		t.Fatal(err)
	}
	ierr := Ingest(w, bytes.NewReader(data), a)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, ierr
}

// TestIngestReal ingests a real SIGQUIT traceback and reads the rows back.
func TestIngestReal(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	out := sigquitTraceback(t)
	rep := parseReport(t, out)
	_, gs := parseAll(t, out)
	when := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	a := &bundle.Artifact{Name: "raw/crash.log", Time: when}
	dir, err := ingestBytes(t, out, a, mem)
	if err != nil {
		t.Fatal(err)
	}
	headers := countHeaders(out)
	if a.Kind != "dump" || a.Status != bundle.StatusComplete || a.Rows != int64(headers) || !a.Time.Equal(when) || a.Size != int64(len(out)) {
		t.Fatalf("artifact %+v, want %d rows", a, headers)
	}
	rows, frames, stacks := readRows(t, dir, mem)
	if len(rows) != headers {
		t.Fatalf("%d rows, %d headers", len(rows), headers)
	}
	want := map[int64]*Goroutine{}
	for _, g := range gs {
		if g.ID != 0 {
			want[g.ID] = g
		}
	}
	for _, r := range rows {
		g := want[r.Goid]
		if g == nil {
			t.Errorf("row for goroutine %d not in the traceback", r.Goid)
			continue
		}
		if r.SnapshotTS != when.UnixNano() || r.Source != "raw/crash.log" || r.State != g.State || r.LockedThread != g.LockedToThread || r.Labels != g.Labels || r.FramesElided != g.FramesElided || r.CreatorGoid != g.CreatorGoid {
			t.Errorf("row %+v does not match goroutine %+v", r, g)
		}
		ids := stacks[r.StackID]
		if len(ids) != len(g.Frames) {
			t.Errorf("goroutine %d: stack %d has %d frames, want %d", r.Goid, r.StackID, len(ids), len(g.Frames))
			continue
		}
		if len(r.FrameArgs) != len(ids) {
			t.Errorf("goroutine %d: %d frame_args entries for %d frames", r.Goid, len(r.FrameArgs), len(ids))
			continue
		}
		for i, id := range ids {
			f := frames[id]
			if f.Function != g.Frames[i].Function || f.File != g.Frames[i].File || f.Line != g.Frames[i].Line || f.Inlined != g.Frames[i].Inlined {
				t.Errorf("goroutine %d frame %d: %+v, want %+v", r.Goid, i, f, g.Frames[i])
			}
			if r.FrameArgs[i] != g.Frames[i].Args {
				t.Errorf("goroutine %d frame %d args %q, want %q", r.Goid, i, r.FrameArgs[i], g.Frames[i].Args)
			}
		}
		if g.CreatedBy == nil {
			if r.CreatorStackID != 0 || r.CreatorFunction != "" {
				t.Errorf("goroutine %d has no creator but row %+v", r.Goid, r)
			}
			continue
		}
		cs := stacks[r.CreatorStackID]
		if r.CreatorFunction != g.CreatedBy.Function || len(cs) != 1 || frames[cs[0]].Function != g.CreatedBy.Function || frames[cs[0]].Line != g.CreatedBy.Line {
			t.Errorf("goroutine %d creator: row %+v, created by %+v", r.Goid, r, g.CreatedBy)
		}
	}
	// The orphans share a stack; so do the creator frames of main's children.
	o := rep.roles["orphan"]
	var so []int64
	for _, r := range rows {
		if r.Goid == o[0] || r.Goid == o[1] {
			so = append(so, r.StackID)
		}
	}
	if len(so) != 2 || so[0] != so[1] || so[0] == 0 {
		t.Errorf("orphan stacks %v, want one shared id", so)
	}
}

// TestIngestTruncated checks the artifact status of a cut-off dump.
func TestIngestTruncated(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	data, err := os.ReadFile("testdata/truncated_tail.txt")
	if err != nil {
		t.Fatal(err)
	}
	a := &bundle.Artifact{Name: "raw/goroutine.txt", Time: time.Unix(100, 0)}
	dir, err := ingestBytes(t, data, a, mem)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != bundle.StatusTruncated || a.Rows != 4 || !strings.Contains(a.Detail, "goroutine 101669") {
		t.Fatalf("artifact %+v", a)
	}
	rows, _, _ := readRows(t, dir, mem)
	if len(rows) != 4 || rows[3].Goid != 101668 || rows[3].CreatorGoid != 101 {
		t.Fatalf("rows %+v", rows)
	}
}

// TestIngestCrashRelay checks that a goroutine printed first without its
// stack and later by its own M is written once, with the stack, and that
// goroutine 0 blocks are not written.
func TestIngestCrashRelay(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	data, err := os.ReadFile("testdata/sigquit_crash.txt")
	if err != nil {
		t.Fatal(err)
	}
	a := &bundle.Artifact{Name: "crash.log", Time: time.Unix(100, 0)}
	dir, err := ingestBytes(t, data, a, mem)
	if err != nil {
		t.Fatal(err)
	}
	rows, frames, stacks := readRows(t, dir, mem)
	var ids []int64
	for _, r := range rows {
		ids = append(ids, r.Goid)
		if r.Goid == 9 && (len(stacks[r.StackID]) != 2 || frames[stacks[r.StackID][0]].Function != "main.spin") {
			t.Errorf("goroutine 9 kept without its stack: %+v", r)
		}
	}
	if a.Rows != 3 || len(rows) != 3 || ids[0] != 1 || ids[1] != 2 || ids[2] != 9 {
		t.Fatalf("rows for goroutines %v (artifact rows %d), want [1 2 9]", ids, a.Rows)
	}
}

// TestIngestBad checks that a dump whose only block is broken fails
// saying where, and that an empty input fails.
func TestIngestBad(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	a := &bundle.Artifact{Name: "x.txt"}
	_, err := ingestBytes(t, []byte("goroutine 4 [select]:\nmain.f()\nfoo\n"), a, mem)
	if err == nil || !strings.Contains(err.Error(), `x.txt: no goroutine found in 3 lines`) || !strings.Contains(err.Error(), `goroutine 4 (line 1) ended at line 3`) || a.Status != bundle.StatusFailed {
		t.Fatalf("err %v, artifact %+v", err, a)
	}
	_, err = ingestBytes(t, nil, a, mem)
	if err == nil || a.Status != bundle.StatusFailed {
		t.Fatalf("empty input: err %v, artifact %+v", err, a)
	}
}
