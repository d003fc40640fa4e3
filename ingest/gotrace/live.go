package gotrace

import (
	"maps"
	"slices"
)

// pagedTable maps goroutine ids to values, the zero value meaning absent.
// The runtime hands out goids in increasing runs, so the goroutines an
// event names are clustered: the table is split into pages of consecutive
// goids, and the page of the previous lookup is kept at hand, which saves
// hashing and a cache miss on most events compared with one map entry per
// goroutine. A page is freed once its last goroutine is gone and a
// lookup moves on to another page, so memory follows the goroutines
// present (at most one page per goroutine, for scattered survivors, and
// one empty page).
type pagedTable[V comparable] struct {
	pages    map[int64]*page[V]
	lastKey  int64
	lastPage *page[V] // page lastKey, nil if none
	n        int
	bits     uint       // a page holds 1<<bits consecutive keys
	spare    []*page[V] // emptied pages, for reuse
}

// maxSparePages bounds the emptied pages a table keeps for reuse: ids
// come in increasing runs, so pages empty and fill all the time.
const maxSparePages = 16

// livePageBits and taskPageBits size the pages of goroutines and of
// tasks. Open tasks are fewer than live goroutines and end sooner, so
// their pages are smaller: a task left open alone costs a page.
const (
	livePageBits = 8
	taskPageBits = 6
)

type page[V comparable] struct {
	v []V
	n int
}

// liveTable holds the live goroutines by goid.
type liveTable = pagedTable[*gor]

func newLiveTable() *liveTable { return newPagedTable[*gor](livePageBits) }

func newPagedTable[V comparable](bits uint) *pagedTable[V] {
	return &pagedTable[V]{pages: make(map[int64]*page[V]), lastKey: -1, bits: bits}
}

func (t *pagedTable[V]) page(goid int64) *page[V] {
	k := goid >> t.bits
	if k == t.lastKey && t.lastPage != nil {
		return t.lastPage
	}
	t.dropEmptyLast()
	p := t.pages[k]
	if p != nil {
		t.lastKey, t.lastPage = k, p
	}
	return p
}

// dropEmptyLast forgets the last page used if it is empty. An emptied
// page stays until the table moves on to another: ids come in increasing
// runs, and a program whose tasks or goroutines live one at a time would
// otherwise drop and re-add the same page at every id.
func (t *pagedTable[V]) dropEmptyLast() {
	if p := t.lastPage; p != nil && p.n == 0 {
		delete(t.pages, t.lastKey)
		if len(t.spare) < maxSparePages {
			t.spare = append(t.spare, p) // empty: every slot is zero again
		}
	}
	t.lastKey, t.lastPage = -1, nil
}

// get returns the value of goid, the zero value if absent.
func (t *pagedTable[V]) get(goid int64) V {
	if p := t.page(goid); p != nil {
		return p.v[goid&(1<<t.bits-1)]
	}
	var zero V
	return zero
}

// put sets the value of goid (v must not be the zero value).
func (t *pagedTable[V]) put(goid int64, v V) {
	p := t.page(goid)
	if p == nil {
		if n := len(t.spare); n > 0 {
			p, t.spare = t.spare[n-1], t.spare[:n-1]
		} else {
			p = &page[V]{v: make([]V, 1<<t.bits)}
		}
		k := goid >> t.bits
		t.pages[k] = p
		t.lastKey, t.lastPage = k, p
	}
	var zero V
	slot := &p.v[goid&(1<<t.bits-1)]
	if *slot == zero {
		p.n++
		t.n++
	}
	*slot = v
}

// remove forgets goid.
func (t *pagedTable[V]) remove(goid int64) {
	p := t.page(goid)
	if p == nil {
		return
	}
	var zero V
	slot := &p.v[goid&(1<<t.bits-1)]
	if *slot == zero {
		return
	}
	*slot = zero
	p.n--
	t.n--
	if p.n == 0 && p != t.lastPage {
		delete(t.pages, goid>>t.bits)
		if len(t.spare) < maxSparePages {
			t.spare = append(t.spare, p) // empty: every slot is zero again
		}
	}
}

// len returns the number of goroutines present.
func (t *pagedTable[V]) len() int { return t.n }

// each calls fn for every goroutine present, in increasing order of
// goid (so that the same trace gives its rows in the same order); fn may
// remove it.
func (t *pagedTable[V]) each(fn func(goid int64, v V)) {
	var zero V
	for _, k := range slices.Sorted(maps.Keys(t.pages)) {
		p := t.pages[k]
		if p == nil {
			continue // dropped by an earlier fn
		}
		for i := range p.v {
			if v := p.v[i]; v != zero {
				fn(k<<t.bits|int64(i), v)
			}
		}
	}
}
