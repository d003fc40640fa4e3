package gotrace

// pagedTable maps goroutine ids to values, the zero value meaning absent.
// The runtime hands out goids in increasing runs, so the goroutines an
// event names are clustered: the table is split into pages of consecutive
// goids, and the page of the previous lookup is kept at hand, which saves
// hashing and a cache miss on most events compared with one map entry per
// goroutine. A page is freed when its last goroutine goes, so memory
// follows the goroutines present (at most one page per goroutine, for
// scattered survivors).
type pagedTable[V comparable] struct {
	pages    map[int64]*page[V]
	lastKey  int64
	lastPage *page[V] // page lastKey, nil if none
	n        int
}

const livePageBits = 8

type page[V comparable] struct {
	v [1 << livePageBits]V
	n int
}

// liveTable holds the live goroutines by goid.
type liveTable = pagedTable[*gor]

func newLiveTable() *liveTable { return newPagedTable[*gor]() }

func newPagedTable[V comparable]() *pagedTable[V] {
	return &pagedTable[V]{pages: make(map[int64]*page[V]), lastKey: -1}
}

func (t *pagedTable[V]) page(goid int64) *page[V] {
	k := goid >> livePageBits
	if k == t.lastKey && t.lastPage != nil {
		return t.lastPage
	}
	p := t.pages[k]
	if p != nil {
		t.lastKey, t.lastPage = k, p
	}
	return p
}

// get returns the value of goid, the zero value if absent.
func (t *pagedTable[V]) get(goid int64) V {
	if p := t.page(goid); p != nil {
		return p.v[goid&(1<<livePageBits-1)]
	}
	var zero V
	return zero
}

// put sets the value of goid (v must not be the zero value).
func (t *pagedTable[V]) put(goid int64, v V) {
	p := t.page(goid)
	if p == nil {
		p = &page[V]{}
		k := goid >> livePageBits
		t.pages[k] = p
		t.lastKey, t.lastPage = k, p
	}
	var zero V
	slot := &p.v[goid&(1<<livePageBits-1)]
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
	slot := &p.v[goid&(1<<livePageBits-1)]
	if *slot == zero {
		return
	}
	*slot = zero
	p.n--
	t.n--
	if p.n == 0 {
		k := goid >> livePageBits
		delete(t.pages, k)
		if t.lastKey == k {
			t.lastKey, t.lastPage = -1, nil
		}
	}
}

// len returns the number of goroutines present.
func (t *pagedTable[V]) len() int { return t.n }

// each calls fn for every goroutine present; fn may remove it.
func (t *pagedTable[V]) each(fn func(goid int64, v V)) {
	var zero V
	for k, p := range t.pages {
		for i := range p.v {
			if v := p.v[i]; v != zero {
				fn(k<<livePageBits|int64(i), v)
			}
		}
	}
}
