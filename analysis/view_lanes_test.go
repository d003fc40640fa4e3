package analysis

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// TestLanes: transitions become state spans, closed by the next change or
// by the end of their trace window; notexist is not drawn; the blocking
// stack of a wait is named and its frames come with the answer.
func TestLanes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := filepath.Join(t.TempDir(), "l.lsb")
	w, err := bundle.Create(dir, bundle.NewManifest("lanes", "test"), mem)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := w.StackID([]bundle.StackFrame{{Function: "runtime.gopark", File: "proc.go", Line: 1}, {Function: "main.wait", File: "/src/main.go", Line: 9}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := bundle.Open(dir)
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(ms int) int64 { return t0.Add(time.Duration(ms) * time.Millisecond).UnixNano() }
	windows := []Window{{Start: t0, End: t0.Add(time.Second)}, {Start: t0.Add(10 * time.Second), End: t0.Add(11 * time.Second)}}
	trs := []schema.Transition{
		{TS: at(0), Goid: 7, From: "undetermined", To: "running"},
		{TS: at(100), Goid: 7, From: "running", To: "waiting", Reason: "chan receive", StackID: block},
		{TS: at(10900), Goid: 7, From: "undetermined", To: "waiting", Reason: "chan receive", StackID: block},
		{TS: at(200), Goid: 9, From: "notexist", To: "runnable"},
		{TS: at(250), Goid: 9, From: "runnable", To: "running"},
		{TS: at(300), Goid: 9, From: "running", To: "syscall"},
		{TS: at(400), Goid: 9, From: "syscall", To: "notexist"},
	}
	lv, err := Lanes(b, mem, trs, []int64{7, 9, 11}, map[int64]string{7: "member", 9: "creator"}, windows, map[int64]string{7: "main.wait"})
	if err != nil {
		t.Fatal(err)
	}
	if len(lv.Lanes) != 2 || len(lv.Missing) != 1 || lv.Missing[0] != 11 {
		t.Fatalf("lanes %d, missing %v", len(lv.Lanes), lv.Missing)
	}
	g7 := lv.Lanes[0]
	if g7.Goid != 7 || g7.Label != "goroutine 7 · main.wait · member" || len(g7.Segments) != 3 {
		t.Fatalf("lane 7: %+v", g7)
	}
	// The wait begun at 100 ms ends with its window at 1 s, not 10 s later
	// where the next window sees the goroutine waiting again.
	if s := g7.Segments[1]; s.State != StateWaiting || s.Reason != "chan receive" || !s.End.Equal(t0.Add(time.Second)) || s.StackID != block {
		t.Errorf("wait segment %+v", s)
	}
	// First seen waiting 900 ms into the second window: blocked since
	// before it, drawn from its start.
	if s := g7.Segments[2]; !s.Start.Equal(t0.Add(10*time.Second)) || !s.End.Equal(t0.Add(11*time.Second)) || !s.SinceBefore {
		t.Errorf("second window's wait %+v", s)
	}
	if s := g7.Segments[0]; !s.SinceBefore || !s.Start.Equal(t0) || g7.Segments[1].SinceBefore {
		t.Errorf("first segments %+v", g7.Segments[:2])
	}
	if fr := lv.Stacks[itoa(block)]; len(fr) != 2 || fr[1].Function != "main.wait" {
		t.Errorf("blocking stack %+v", fr)
	}
	g9 := lv.Lanes[1]
	var states []string
	for _, s := range g9.Segments {
		states = append(states, s.State)
	}
	if len(states) != 3 || states[0] != StateRunnable || states[1] != StateRunning || states[2] != StateSyscall || !g9.Segments[2].End.Equal(time.Unix(0, at(400)).UTC()) {
		t.Errorf("lane 9 states %v %+v", states, g9.Segments)
	}
	if sh := g9.Share; sh[StateRunnable] < 0.24 || sh[StateRunnable] > 0.26 || sh[StateSyscall] < 0.49 || sh[StateSyscall] > 0.51 {
		t.Errorf("lane 9 shares %v", sh)
	}
	if !lv.From.Equal(t0) || !lv.To.Equal(t0.Add(11*time.Second)) {
		t.Errorf("span %v .. %v", lv.From, lv.To)
	}
}

func itoa(v int64) string { return fmt.Sprint(v) }
