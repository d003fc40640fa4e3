package gotrace

// liveTable holds the live goroutines by goid. The runtime hands out goids
// in increasing runs, so the goroutines an event names are clustered: the
// table is split into pages of consecutive goids, and the page of the
// previous lookup is kept at hand, which saves hashing and a cache miss on
// most events compared with one map entry per goroutine. A page is freed
// when its last goroutine ends, so memory follows the live goroutines
// (at most one page per live goroutine, for scattered survivors).
type liveTable struct {
	pages    map[int64]*livePage
	lastKey  int64
	lastPage *livePage // page lastKey, nil if none
	n        int
}

const livePageBits = 8

type livePage struct {
	g [1 << livePageBits]*gor
	n int
}

func newLiveTable() *liveTable { return &liveTable{pages: make(map[int64]*livePage), lastKey: -1} }

func (t *liveTable) page(goid int64) *livePage {
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

// get returns the goroutine goid, nil if it is not live.
func (t *liveTable) get(goid int64) *gor {
	if p := t.page(goid); p != nil {
		return p.g[goid&(1<<livePageBits-1)]
	}
	return nil
}

// put adds goroutine goid, which must not be live.
func (t *liveTable) put(goid int64, g *gor) {
	p := t.page(goid)
	if p == nil {
		p = &livePage{}
		k := goid >> livePageBits
		t.pages[k] = p
		t.lastKey, t.lastPage = k, p
	}
	slot := &p.g[goid&(1<<livePageBits-1)]
	if *slot == nil {
		p.n++
		t.n++
	}
	*slot = g
}

// remove forgets goroutine goid.
func (t *liveTable) remove(goid int64) {
	p := t.page(goid)
	if p == nil {
		return
	}
	slot := &p.g[goid&(1<<livePageBits-1)]
	if *slot == nil {
		return
	}
	*slot = nil
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

// len returns the number of live goroutines.
func (t *liveTable) len() int { return t.n }

// each calls fn for every live goroutine; fn may remove it.
func (t *liveTable) each(fn func(goid int64, g *gor)) {
	for k, p := range t.pages {
		for i := range p.g {
			if g := p.g[i]; g != nil {
				fn(k<<livePageBits|int64(i), g)
			}
		}
	}
}
