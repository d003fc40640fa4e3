// Package arrowjs checks that bundle tables written by Go open in another
// Arrow implementation: apache-arrow for JavaScript, run under node.
package arrowjs

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

type jsTable struct {
	Rows     int64             `json:"rows"`
	Sums     map[string]string `json:"sums"`
	Distinct map[string]int    `json:"distinct"`
}

func TestApacheArrowJSReadsBundle(t *testing.T) {
	if _, err := os.Stat("node_modules/apache-arrow"); err != nil {
		t.Fatal("apache-arrow for node is not installed: run `make deps` (npm ci in internal/arrowjs)")
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := filepath.Join(t.TempDir(), "x.lsb")
	w, err := bundle.Create(dir, bundle.NewManifest("js", "test"), mem)
	if err != nil {
		t.Fatal(err)
	}
	states := []string{"chan send", "select", "chan receive", "IO wait"}
	var goidSum, waitSum, heapSum, spanIDSum int64
	const n = 150_000 // more than one batch, so dictionaries are replaced
	for i := 1; i <= n; i++ {
		sid, err := w.StackID([]bundle.StackFrame{
			{Function: fmt.Sprintf("main.worker%d", i%7), File: "main.go", Line: int64(i % 7)},
			{Function: "main.main", File: "main.go", Line: 1},
		})
		if err != nil {
			t.Fatal(err)
		}
		g := schema.Goroutine{SnapshotTS: 1_700_000_000_000_000_000 + int64(i/1000)*1e9, Goid: int64(i), State: states[i%4], WaitMinutes: int64(i % 13), StackID: sid, CreatorGoid: int64(i / 2), CreatorFunction: "main.spawn", Source: "raw/dump.txt"}
		w.Append(g)
		goidSum += g.Goid
		waitSum += g.WaitMinutes
		if i%100 == 0 {
			s := schema.Sample{SnapshotTS: g.SnapshotTS, Profile: schema.ProfileHeap, StackID: sid, Source: "raw/heap.pb.gz"}
			s.Set(schema.ColInuseSpace, int64(i*8))
			heapSum += int64(i * 8)
			w.Append(s)
		}
		if i%10 == 0 {
			// spans is compressed with LZ4, the other tables with zstd.
			sp := schema.Span{ID: int64(i), Kind: schema.SpanRegion, Name: fmt.Sprintf("region%d", i/10%5), Goid: g.Goid, StartTS: g.SnapshotTS, EndTS: g.SnapshotTS + int64(i)}
			w.Append(sp)
			spanIDSum += sp.ID
		}
		if i%1000 == 0 {
			w.Flush() // many batches, like a live capture
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	out, err := exec.Command("node", "summarize.mjs", dir).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("node: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("node: %v", err)
	}
	var got map[string]jsTable
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("decode node output %q: %v", out, err)
	}
	check := func(table, col string, want int64) {
		t.Helper()
		s, ok := got[table].Sums[col]
		if !ok {
			t.Errorf("JS saw no column %s.%s", table, col)
			return
		}
		if v, _ := strconv.ParseInt(s, 10, 64); v != want {
			t.Errorf("JS sum of %s.%s = %s, Go wrote %d", table, col, s, want)
		}
	}
	if got["goroutines"].Rows != n {
		t.Errorf("JS read %d goroutine rows, Go wrote %d", got["goroutines"].Rows, n)
	}
	check("goroutines", "goid", goidSum)
	check("goroutines", "wait_minutes", waitSum)
	check("samples", "inuse_space", heapSum)
	if got["samples"].Rows != n/100 {
		t.Errorf("JS read %d sample rows, want %d", got["samples"].Rows, n/100)
	}
	if d := got["goroutines"].Distinct["state"]; d != len(states) {
		t.Errorf("JS decoded %d distinct states, want %d", d, len(states))
	}
	if got["spans"].Rows != n/10 {
		t.Errorf("JS read %d span rows, want %d", got["spans"].Rows, n/10)
	}
	check("spans", "span_id", spanIDSum)
	if d := got["spans"].Distinct["name"]; d != 5 {
		t.Errorf("JS decoded %d distinct span names, want 5", d)
	}
	if got["stacks"].Rows != 7 || got["frames"].Rows != 8 {
		t.Errorf("JS read %d stacks and %d frames, want 7 and 8", got["stacks"].Rows, got["frames"].Rows)
	}
}
