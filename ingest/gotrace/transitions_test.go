package gotrace

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"golang.org/x/exp/trace"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// change is a state change as a test compares it.
type change struct {
	goid             int64
	from, to, reason string
	leaf             string // innermost function of the stack
}

// referenceChanges reads the whole trace in order with x/exp/trace and
// returns every goroutine state change (from != to), with the stack the
// change is about (the creator's for a creation).
func referenceChanges(t *testing.T, path string) map[int64][]change {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64][]change{}
	eachEvent(t, data, func(ev *trace.Event) {
		if ev.Kind() != trace.EventStateTransition {
			return
		}
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			return
		}
		from, to := st.Goroutine()
		if from == to {
			return
		}
		s := st.Stack
		if from == trace.GoNotExist {
			s = ev.Stack()
		}
		leaf := ""
		for f := range s.Frames() {
			leaf = f.Func
			break
		}
		g := int64(st.Resource.Goroutine())
		out[g] = append(out[g], change{g, stateName(from), stateName(to), st.Reason, leaf})
	})
	return out
}

// eachEvent reads the trace data in order with x/exp/trace and calls fn
// with each event.
func eachEvent(t *testing.T, data []byte, fn func(*trace.Event)) {
	t.Helper()
	r, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(&ev)
	}
}

// TestTransitions checks that decoding on demand, generation by
// generation, gives every goroutine the state changes a sequential read
// of the whole trace gives.
func TestTransitions(t *testing.T) {
	rec := record(t)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir, _ := ingestFiles(t, mem, Options{}, rec.window1)
	tb := readTables(t, dir, mem)
	if len(tb.generations) < 3 {
		t.Fatalf("%d generations indexed", len(tb.generations))
	}
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ref := referenceChanges(t, rec.window1)
	goids := make([]int64, 0, len(ref))
	for g := range ref {
		goids = append(goids, g)
	}
	got, err := TransitionsFrom(b, nil, goids, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	byGoid := map[int64][]change{}
	var last schema.Transition
	for i, tr := range got {
		if i > 0 && (tr.Goid < last.Goid || tr.Goid == last.Goid && tr.TS < last.TS) {
			t.Fatalf("not sorted by goroutine and time at %d: %+v after %+v", i, tr, last)
		}
		last = tr
		leaf := ""
		if fns := tb.stacks[tr.StackID]; len(fns) > 0 {
			leaf = fns[0]
		}
		if tr.TS < tb.manifest.Start.UnixNano() || tr.TS > tb.manifest.End.UnixNano() || tr.MonoNS == 0 {
			t.Errorf("transition %+v outside the trace %v .. %v", tr, tb.manifest.Start, tb.manifest.End)
		}
		byGoid[tr.Goid] = append(byGoid[tr.Goid], change{tr.Goid, tr.From, tr.To, tr.Reason, leaf})
	}
	n := 0
	for g, want := range ref {
		n += len(want)
		if !slices.Equal(byGoid[g], want) {
			t.Errorf("goroutine %d: decoded\n%v\nsequential read\n%v", g, byGoid[g], want)
		}
	}
	if len(got) != n {
		t.Errorf("%d transitions decoded, the sequential read has %d", len(got), n)
	}

	// A leaker: created, then parked on its channel, with where.
	leaker := rec.sum.ChanLeakers[0]
	one, err := TransitionsFrom(b, nil, []int64{leaker}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(one) < 2 || one[0].From != "notexist" || one[len(one)-1].To != "waiting" || one[len(one)-1].Reason != "chan receive" ||
		!slices.Contains(tb.stacks[one[len(one)-1].StackID], "main.leakChan") {
		t.Errorf("leaker %d: %+v", leaker, one)
	}
	// A time range keeps the changes inside it.
	mid := one[len(one)/2].TS
	part, err := TransitionsFrom(b, nil, []int64{leaker}, mid, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(part) == 0 || len(part) >= len(one) || part[0].TS < mid {
		t.Errorf("from %d: %d of %d transitions, first %+v", mid, len(part), len(one), part)
	}
	if none, err := TransitionsFrom(b, nil, []int64{1 << 40}, 0, 0); err != nil || len(none) != 0 {
		t.Errorf("unknown goroutine: %v, %v", none, err)
	}
}

// TestTransitionsWindows: in a second window a leaker first appears as
// undetermined → waiting (it was parked when the window began), once.
func TestTransitionsWindows(t *testing.T) {
	rec := record(t)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir, _ := ingestFiles(t, mem, Options{}, rec.window1, rec.window2)
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	leaker := rec.sum.ChanLeakers[0]
	trs, err := TransitionsFrom(b, nil, []int64{leaker}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var undetermined int
	for _, tr := range trs {
		if tr.From == "undetermined" {
			undetermined++
			if tr.To != "waiting" {
				t.Errorf("second window starts the leaker %s", tr.To)
			}
		}
	}
	if trs[0].From != "notexist" || undetermined != 1 {
		t.Errorf("leaker over two windows: %+v", trs)
	}
}

// TestTransitionsTable: a bundle written before trace_generations existed
// answers from its trace_transitions table.
func TestTransitionsTable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "old.lsb")
	w, err := bundle.Create(dir, bundle.NewManifest("old", "test"), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	for i, to := range []string{"runnable", "running", "waiting"} {
		from := []string{"notexist", "runnable", "running"}[i]
		for _, g := range []int64{7, 8} {
			if err := w.Append(schema.Transition{TS: int64(1000 + i), MonoNS: int64(i + 1), Goid: g, From: from, To: to, Reason: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	trs, err := TransitionsFrom(b, nil, []int64{8}, 1001, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(trs) != 2 || trs[0].Goid != 8 || trs[0].To != "running" || trs[1].Reason != "2" {
		t.Errorf("from the table: %+v", trs)
	}
}

// TestWorkersAgree: decoding one generation at a time (steps applied as
// they are decoded) or several at once (steps merged from parts), from a
// file or from a stream, gives the same tables.
func TestWorkersAgree(t *testing.T) {
	data, err := os.ReadFile(record(t).window1)
	if err != nil {
		t.Fatal(err)
	}
	checkWorkersAgree(t, data)
}

// TestLargeGenerationsAgree: with generations of many batches of events,
// one worker opens the next generation while it parses the end of the
// one before (parser.cue), and still gives the tables several workers
// give.
func TestLargeGenerationsAgree(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spans.trace")
	cmd := exec.Command("go", "run", "./testdata/bigprog", "-out", path, "-size", "6000000", "-shape", "spans")
	cmd.Env = append(os.Environ(), "GODEBUG=traceadvanceperiod=100000000")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bigprog: %v\n%s", err, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkWorkersAgree(t, data)
	large := 0
	for _, n := range eventsPerGeneration(t, data) {
		if n > 2*evBatchLen {
			large++
		}
	}
	if large < 2 {
		t.Fatalf("%d generations have more than %d events; the test needs two", large, 2*evBatchLen)
	}
}

// eventsPerGeneration counts the events between the trace's Syncs.
func eventsPerGeneration(t *testing.T, data []byte) []int {
	t.Helper()
	var counts []int
	eachEvent(t, data, func(ev *trace.Event) {
		if ev.Kind() == trace.EventSync {
			counts = append(counts, 0)
		} else if len(counts) > 0 {
			counts[len(counts)-1]++
		}
	})
	return counts
}

// checkWorkersAgree ingests the trace data with one and several workers,
// from a file and from a stream, and fails unless every ingest gives the
// same tables.
func checkWorkersAgree(t *testing.T, data []byte) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	var want *tables
	for _, tc := range []struct {
		workers int
		stream  bool
	}{{1, false}, {3, false}, {2, true}, {1, true}} {
		dir := filepath.Join(t.TempDir(), "b.lsb")
		w, err := bundle.Create(dir, bundle.NewManifest("t", "t"), mem)
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = bytes.NewReader(data)
		if tc.stream {
			r = struct{ io.Reader }{r}
		}
		a := bundle.Artifact{Name: "raw/w1.trace"}
		if err := Ingest(w, r, &a, Options{Mem: mem, Workers: tc.workers}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got := readTables(t, dir, mem)
		if want == nil {
			want = got
			continue
		}
		name := fmt.Sprintf("%d workers, stream %v", tc.workers, tc.stream)
		if !slices.Equal(got.goroutines, want.goroutines) || !slices.Equal(got.spans, want.spans) || !slices.Equal(got.generations, want.generations) {
			t.Errorf("%s: tables differ", name)
		}
		for m, rows := range want.metrics {
			if !slices.Equal(got.metrics[m], rows) {
				t.Errorf("%s: metric %s differs", name, m)
			}
		}
	}
}

// TestJoinGenerationsKeepsTraceOrder checks that rows of a later generation
// stamped before the generation before's last keep the trace's order,
// their times raised past it, and that a generation's repeated status
// row is dropped.
func TestJoinGenerationsKeepsTraceOrder(t *testing.T) {
	gens := []schema.TraceGeneration{{Source: "raw/a.trace", Generation: 1}, {Source: "raw/a.trace", Generation: 2}, {Source: "raw/b.trace", Generation: 1}}
	row := func(from, to string, ts int64) schema.Transition {
		return schema.Transition{Goid: 4, From: from, To: to, TS: ts, MonoNS: ts - 50}
	}
	results := [][]schema.Transition{
		{row("undetermined", "waiting", 100)},
		{row("undetermined", "waiting", 90), row("waiting", "runnable", 95), row("runnable", "running", 101), row("running", "waiting", 130)},
		{row("undetermined", "waiting", 80)},
	}
	got := joinGenerations(gens, []int{0, 1, 2}, results)
	want := []schema.Transition{
		row("undetermined", "waiting", 100),
		row("waiting", "runnable", 101),
		row("runnable", "running", 102),
		row("running", "waiting", 130),
		row("undetermined", "waiting", 80), // another trace: its own first appearance, its own times
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%v\nwant\n%v", got, want)
	}
}
