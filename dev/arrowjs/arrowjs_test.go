// Package arrowjs checks that bundle tables written by Go open in another
// Arrow implementation: apache-arrow for JavaScript, run under node.
package arrowjs

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// jsTable is what summarize.mjs reports of one table: its rows, the sum of
// each numeric column (as a decimal string) and the number of distinct
// values of each dictionary column.
type jsTable struct {
	Rows     int64             `json:"rows"`
	Sums     map[string]string `json:"sums"`
	Distinct map[string]int    `json:"distinct"`
}

// TestApacheArrowJSReadsBundle: apache-arrow for JavaScript reads every
// row, column sum and dictionary of a many-batch bundle Go wrote.
func TestApacheArrowJSReadsBundle(t *testing.T) {
	if _, err := os.Stat("node_modules/apache-arrow"); err != nil {
		t.Fatal("apache-arrow for node is not installed: run `make deps` (npm ci in dev/arrowjs)")
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := filepath.Join(t.TempDir(), "x.lsb")
	wrote := writeJSBundle(t, dir, mem)
	got := summarizeWithNode(t, dir)
	for _, c := range []struct {
		table string
		rows  int64
	}{
		{"goroutines", jsRows}, {"samples", jsRows / 100}, {"spans", jsRows / 10}, {"stacks", 7}, {"frames", 8},
	} {
		if got[c.table].Rows != c.rows {
			t.Errorf("JS read %d %s rows, Go wrote %d", got[c.table].Rows, c.table, c.rows)
		}
	}
	for _, c := range []struct {
		table, col string
		want       int64
	}{
		{"goroutines", "goid", wrote.goidSum},
		{"goroutines", "wait_minutes", wrote.waitSum},
		{"samples", "inuse_space", wrote.heapSum},
		{"spans", "span_id", wrote.spanIDSum},
		{"spans", "start_ts", wrote.spanStartSum},
		{"spans", "end_ts", wrote.spanEndSum},
	} {
		s, ok := got[c.table].Sums[c.col]
		if !ok {
			t.Errorf("JS saw no column %s.%s", c.table, c.col)
			continue
		}
		if v := wrap64(s); v != c.want {
			t.Errorf("JS sum of %s.%s = %s, Go wrote %d", c.table, c.col, s, c.want)
		}
	}
	for _, c := range []struct {
		table, col string
		want       int
	}{
		{"goroutines", "state", len(jsStates)}, {"spans", "name", 5},
	} {
		if d := got[c.table].Distinct[c.col]; d != c.want {
			t.Errorf("JS decoded %d distinct %s.%s, want %d", d, c.table, c.col, c.want)
		}
	}
}

// wrap64 is the decimal s modulo 2^64, as an int64: Go's sums wrap, JS's
// do not.
func wrap64(s string) int64 {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return 0
	}
	return int64(v.And(v, new(big.Int).SetUint64(math.MaxUint64)).Uint64())
}

// jsRows goroutines are written: more than one batch, so dictionaries are
// replaced.
const jsRows = 150_000

// jsStates are the goroutine states written, in turn.
var jsStates = []string{"chan send", "select", "chan receive", "IO wait"}

// jsSums are the column sums of what writeJSBundle wrote.
type jsSums struct {
	goidSum, waitSum, heapSum, spanIDSum int64
	spanStartSum, spanEndSum             int64 // wrapping at 64 bits
}

// writeJSBundle writes a bundle at dir of jsRows goroutines on 7 stacks, a
// heap sample every 100th and a span every 10th, flushed every 1000 like a
// live capture, and returns the sums of the columns it wrote.
func writeJSBundle(t *testing.T, dir string, mem memory.Allocator) jsSums {
	t.Helper()
	w, err := bundle.Create(dir, bundle.NewManifest("js", "test"), mem)
	if err != nil {
		t.Fatal(err)
	}
	var sums jsSums
	for i := 1; i <= jsRows; i++ {
		sid, err := w.StackID([]bundle.StackFrame{
			{Function: fmt.Sprintf("main.worker%d", i%7), File: "main.go", Line: int64(i % 7)},
			{Function: "main.main", File: "main.go", Line: 1},
		})
		if err != nil {
			t.Fatal(err)
		}
		g := schema.Goroutine{SnapshotTS: 1_700_000_000_000_000_000 + int64(i/1000)*1e9, Goid: int64(i), State: jsStates[i%4], WaitMinutes: int64(i % 13), StackID: sid, CreatorGoid: int64(i / 2), CreatorFunction: "main.spawn", Source: "raw/dump.txt"}
		w.Append(g)
		sums.goidSum += g.Goid
		sums.waitSum += g.WaitMinutes
		if i%100 == 0 {
			s := schema.Sample{SnapshotTS: g.SnapshotTS, Profile: schema.ProfileHeap, StackID: sid, Source: "raw/heap.pb.gz"}
			s.Set(schema.ColInuseSpace, int64(i*8))
			sums.heapSum += int64(i * 8)
			w.Append(s)
		}
		if i%10 == 0 {
			// spans stores its ids and times as differences (schema.Encodings), which summarize.mjs undoes.
			sp := schema.Span{ID: int64(i), Kind: schema.SpanRegion, Name: fmt.Sprintf("region%d", i/10%5), Goid: g.Goid, StartTS: g.SnapshotTS, EndTS: g.SnapshotTS + int64(i)}
			w.Append(sp)
			sums.spanIDSum += sp.ID
			sums.spanStartSum += sp.StartTS
			sums.spanEndSum += sp.EndTS
		}
		if i%1000 == 0 {
			w.Flush() // many batches, like a live capture
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return sums
}

// summarizeWithNode runs summarize.mjs on the bundle at dir and decodes
// what apache-arrow read of each table.
func summarizeWithNode(t *testing.T, dir string) map[string]jsTable {
	t.Helper()
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
	return got
}
