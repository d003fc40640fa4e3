package gotrace

import (
	"math/rand/v2"
	"testing"
)

// TestPagedTableOrder: each visits goids in increasing order whatever
// the order they came in, so the rows of goroutines alive at the end of a
// trace come out the same way in every run.
func TestPagedTableOrder(t *testing.T) {
	tab := newPagedTable[int32](4)
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[int64]bool{}
	for range 500 {
		g := rng.Int64N(100_000) + 1
		tab.put(g, 1)
		want[g] = true
	}
	last := int64(-1)
	n := 0
	tab.each(func(g int64, _ int32) {
		if g <= last {
			t.Fatalf("goid %d after %d", g, last)
		}
		if !want[g] {
			t.Fatalf("goid %d was never put", g)
		}
		last = g
		n++
		tab.remove(g)
	})
	if n != len(want) || tab.len() != 0 {
		t.Errorf("visited %d of %d goids, %d left", n, len(want), tab.len())
	}
}

// TestPagedTablePages: goroutines that live one at a time, in increasing
// ids, keep at most one page, and a page emptied while in use stays (no
// drop and re-add at every id) until a lookup moves on.
func TestPagedTablePages(t *testing.T) {
	tab := newPagedTable[int32](8)
	for g := int64(1); g < 10_000; g++ {
		tab.put(g, 1)
		tab.remove(g)
		if len(tab.pages) != 1 {
			t.Fatalf("after goid %d: %d pages, want the one in use", g, len(tab.pages))
		}
	}
	tab.put(5, 1)
	tab.put(1<<20, 1)
	tab.remove(1 << 20)
	if got := tab.get(5); got != 1 || len(tab.pages) != 1 {
		t.Errorf("get(5) = %d with %d pages, want 1 with 1", got, len(tab.pages))
	}
}
