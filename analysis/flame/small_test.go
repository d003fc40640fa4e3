package flame

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakscope/leakscope/dev/golden"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

const (
	smallT1 = int64(1_700_000_000_000_000_000)
	smallT2 = smallT1 + 60_000_000_000
)

func frames(fns ...string) []bundle.StackFrame {
	out := make([]bundle.StackFrame, len(fns))
	for i, fn := range fns {
		out[i] = bundle.StackFrame{Function: fn, File: "/src/" + PackageOf(fn) + "/x.go", Line: int64(10 + i)}
	}
	return out
}

// smallBundle writes a small deterministic bundle: heap samples at two
// snapshots (with recursion and a stack id the stacks table lacks) and a
// goroutine dump with no goroutine profile beside it.
func smallBundle(t *testing.T, mem memory.Allocator) *bundle.Bundle {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small.lsb")
	w, err := bundle.Create(dir, bundle.NewManifest("small", "test"), mem)
	if err != nil {
		t.Fatal(err)
	}
	id := func(fns ...string) int64 {
		sid, err := w.StackID(frames(fns...))
		if err != nil {
			t.Fatal(err)
		}
		return sid
	}
	leak := id("main.leak", "main.worker", "main.main")
	cache := id("github.com/acme/cache.(*LRU).Add", "main.worker", "main.main")
	rec := id("main.alloc", "main.walk", "main.walk", "main.walk", "main.main")
	json := id("encoding/json.Marshal", "net/http.(*conn).serve", "runtime.goexit")
	heap := func(ts, stack, v int64) {
		s := schema.Sample{SnapshotTS: ts, Profile: schema.ProfileHeap, StackID: stack}
		s.Set(schema.ColInuseSpace, v)
		s.Set(schema.ColAllocSpace, 2*v)
		if err := w.Append(s); err != nil {
			t.Fatal(err)
		}
	}
	heap(smallT1, leak, 4096)
	heap(smallT1, cache, 8192)
	heap(smallT1, rec, 1024)
	heap(smallT1, json, 2048)
	if err := w.Flush(); err != nil { // one batch per snapshot
		t.Fatal(err)
	}
	heap(smallT2, leak, 65536)
	heap(smallT2, cache, 8192)
	heap(smallT2, rec, 512)
	heap(smallT2, json, 1000)
	heap(smallT2, 9999, 60) // no such stack
	heap(smallT2, -5, 40)   // corrupt id
	park := id("runtime.gopark", "runtime.chanrecv1", "main.consume")
	sel := id("runtime.gopark", "runtime.selectgo", "main.poll")
	for g := int64(1); g <= 10; g++ {
		st := park
		if g%3 == 0 {
			st = sel
		}
		if err := w.Append(schema.Goroutine{SnapshotTS: smallT1, Goid: g, State: "chan receive", StackID: st}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSmallTree(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b := smallBundle(t, mem)
	tree, err := FromBundle(b, mem, Query{Profile: schema.ProfileHeap, Snapshot: smallT1})
	if err != nil {
		t.Fatal(err)
	}
	if tree.Total() != 4096+8192+1024+2048 {
		t.Fatalf("total %d", tree.Total())
	}
	top := map[string]FuncStat{}
	for _, f := range Top(tree) {
		top[f.Name] = f
	}
	// main.walk recurses three deep: its cum counts the stack once.
	if f := top["main.walk"]; f.Cum != 1024 || f.Flat != 0 {
		t.Errorf("main.walk flat/cum %d/%d, want 0/1024", f.Flat, f.Cum)
	}
	if f := top["main.worker"]; f.Cum != 4096+8192 {
		t.Errorf("main.worker cum %d", f.Cum)
	}
	if f := top["main.alloc"]; f.Flat != 1024 || f.File != "/src/main/x.go" {
		t.Errorf("main.alloc %+v", f)
	}
	var js bytes.Buffer
	enc, err := json.MarshalIndent(tree, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	js.Write(enc)
	js.WriteByte('\n')
	golden.Check(t, "small.json", js.Bytes())
	var svg bytes.Buffer
	if err := SVG(tree, &svg, SVGOptions{Width: 600}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "small.svg", svg.Bytes())

	// Round trip through JSON.
	var back Tree
	if err := json.Unmarshal(enc, &back); err != nil {
		t.Fatal(err)
	}
	re, _ := json.MarshalIndent(&back, "", " ")
	if !bytes.Equal(re, enc) {
		t.Errorf("JSON round trip changed the tree:\n%s", re)
	}
}

func TestSmallDiffAndUnknownStack(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b := smallBundle(t, mem)
	tree, err := FromBundle(b, mem, Query{Profile: schema.ProfileHeap, Base: smallT1})
	if err != nil {
		t.Fatal(err)
	}
	newTotal := int64(65536 + 8192 + 512 + 1000 + 100)
	oldTotal := int64(4096 + 8192 + 1024 + 2048)
	if tree.Snapshot != smallT2 || tree.Total() != newTotal-oldTotal || tree.Root.BaseTotal != oldTotal {
		t.Fatalf("diff: snapshot %d total %d base %d", tree.Snapshot, tree.Total(), tree.Root.BaseTotal)
	}
	var unknown *Node
	for _, c := range tree.Root.Children {
		if c.Name == unknownStack {
			unknown = c
		}
	}
	if unknown == nil || unknown.Total != 100 || unknown.Self != 100 {
		t.Fatalf("unknown stack node %+v", unknown)
	}
	enc, err := json.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	var back Tree
	if err := json.Unmarshal(enc, &back); err != nil {
		t.Fatal(err)
	}
	if back.Total() != tree.Total() || back.Root.BaseTotal != oldTotal || len(Top(&back)) != len(Top(tree)) {
		t.Fatalf("diff JSON round trip: total %d base %d", back.Total(), back.Root.BaseTotal)
	}
	var svg bytes.Buffer
	if err := SVG(tree, &svg, SVGOptions{Width: 600, Title: "heap growth"}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "small_diff.svg", svg.Bytes())

	// Widths by change: every stack's change counts by its size, growth
	// (main.leak +61440) and shrink (main.alloc -512, json -1048) alike.
	if got, want := tree.Root.AbsDelta, int64(61440+512+1048+100); got != want {
		t.Errorf("root change size %d, want %d", got, want)
	}
	widths := map[string]int64{}
	for _, w := range []string{WidthNew, WidthBase, WidthChange} {
		widths[w] = layoutWidth(tree, tree.Root.Children[1], w) // main.main
	}
	if tree.Root.Children[1].Name != "main.main" || widths[WidthNew] != 65536+8192+512 || widths[WidthBase] != 4096+8192+1024 || widths[WidthChange] != 61440+512 {
		t.Errorf("main.main widths %v", widths)
	}
	if back.Root.AbsDelta != tree.Root.AbsDelta {
		t.Errorf("JSON round trip lost the change size: %d", back.Root.AbsDelta)
	}
	var bySize bytes.Buffer
	if err := SVG(tree, &bySize, SVGOptions{Width: 600, Widths: WidthChange}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(bySize.Bytes(), []byte("widths by the change")) || bytes.Equal(bySize.Bytes(), svg.Bytes()) {
		t.Errorf("SVG by change is not laid out by the change")
	}
	if err := SVG(tree, &bySize, SVGOptions{Widths: "area"}); err == nil {
		t.Error("unknown widths accepted")
	}

	// Prune drops the small frames and nothing else.
	removed := tree.Prune(2000)
	if removed == 0 {
		t.Fatal("prune removed nothing")
	}
	tree.Walk(func(n *Node, d int) bool {
		if d > 0 && n.Total+n.BaseTotal < 2000 && n.BaseTotal < 2000 {
			t.Errorf("%s (%d) survived pruning", n.Name, n.Total+n.BaseTotal)
		}
		return true
	})
}

func TestFallbackToDump(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b := smallBundle(t, mem)
	tree, err := FromBundle(b, mem, Query{Profile: schema.ProfileGoroutine})
	if err != nil {
		t.Fatal(err)
	}
	if tree.Source != SourceGoroutines || tree.Total() != 10 || tree.Snapshot != smallT1 {
		t.Fatalf("source %s total %d snapshot %d", tree.Source, tree.Total(), tree.Snapshot)
	}
	inv, err := FromBundle(b, mem, Query{Invert: true, Focus: []string{`^main\.poll$`}})
	if err != nil {
		t.Fatal(err)
	}
	// Goroutines 3, 6 and 9 sit in main.poll; inverted, the leaf comes first.
	if inv.Total() != 3 || len(inv.Root.Children) != 1 || inv.Root.Children[0].Name != "runtime.gopark" {
		t.Fatalf("inverted focus: total %d children %v", inv.Total(), inv.Root.Children)
	}
	var svg bytes.Buffer
	if err := SVG(inv, &svg, SVGOptions{Width: 400}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "small_inverted.svg", svg.Bytes())
}

func TestTruncatedSamples(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b := smallBundle(t, mem)
	path := filepath.Join(b.Dir, schema.TableSamples+".arrow")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Cut the second snapshot's batch short, as a killed writer would.
	if err := os.WriteFile(path, data[:len(data)-40], 0o644); err != nil {
		t.Fatal(err)
	}
	tree, err := FromBundle(b, mem, Query{Profile: schema.ProfileHeap})
	if err != nil {
		t.Fatal(err)
	}
	if !tree.Truncated || tree.Snapshot != smallT1 || tree.Total() != 4096+8192+1024+2048 {
		t.Fatalf("truncated %v snapshot %d total %d; want the first snapshot, flagged", tree.Truncated, tree.Snapshot, tree.Total())
	}
	got, err := Profiles(b, mem)
	if err != nil || len(got[schema.ProfileHeap]) != 1 {
		t.Fatalf("snapshots of a truncated table: %v %v", got, err)
	}
}

func TestNoData(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := filepath.Join(t.TempDir(), "empty.lsb")
	w, err := bundle.Create(dir, bundle.NewManifest("empty", "test"), mem)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = FromBundle(b, mem, Query{})
	if !errors.Is(err, ErrNoSnapshot) || !strings.Contains(err.Error(), "no goroutine dump") {
		t.Fatalf("empty bundle: %v", err)
	}
	if ts, err := Profiles(b, mem); err != nil || len(ts) != 0 {
		t.Fatalf("snapshots of an empty bundle: %v %v", ts, err)
	}
}

func FuzzTreeJSON(f *testing.F) {
	for _, name := range []string{"small.json"} {
		if data, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"base":5,"root":{"n":"root","v":3,"d":-2,"c":[{"n":"a","v":3,"d":-2}]}}`))
	f.Add([]byte(`{"root":null}`))
	f.Add([]byte(`{"root":{"n":"a\"b\\c\u0001<&>\u00e9\t","v":1,"c":[{"n":"\ud800x","v":1}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var tr Tree
		err := json.Unmarshal(data, &tr)
		if (err == nil) != (tr.Root != nil) {
			t.Fatalf("err %v with root %v", err, tr.Root)
		}
		if err == nil {
			enc, err := json.Marshal(&tr)
			if err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			var back Tree
			if err := json.Unmarshal(enc, &back); err != nil {
				t.Fatalf("decode own encoding: %v\n%s", err, enc)
			}
			if back.Nodes() != tr.Nodes() || back.Total() != tr.Total() {
				t.Fatalf("round trip: %d nodes total %d, was %d nodes total %d", back.Nodes(), back.Total(), tr.Nodes(), tr.Total())
			}
			Top(&tr)
			var buf bytes.Buffer
			if err := SVG(&tr, &buf, SVGOptions{}); err != nil {
				t.Fatalf("svg: %v", err)
			}
		}
	})
}
