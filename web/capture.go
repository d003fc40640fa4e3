package web

import (
	"container/list"
	"fmt"
	"log"
	"net/http"
	"runtime/debug"
	"sync"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/flame"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// maxCachedAnswers bounds the flame-graph and timeline answers kept per
// capture.
const maxCachedAnswers = 32

// capture is one bundle of the store with its analysis results, computed
// on first use and kept until the capture is deleted. Its methods are safe
// for concurrent use.
type capture struct {
	id string
	b  *bundle.Bundle
	s  *Store
	// use is held for reading by every request on the capture and for
	// writing by Delete while it removes the files.
	use sync.RWMutex

	run      analysisRun
	listed   lazy[*cachedAnalysis]
	ancestry lazy[*analysis.AncestryTree]
	stacks   lazy[*flame.Stacks]
	profiles lazy[map[string][]int64]
	dumps    lazy[[]int64]
	tables   lazy[[]bundle.TableInfo]
	digest   lazy[string]
	size     lazy[int64]

	answers answerCache

	selMu      sync.Mutex
	selections map[string]*lazy[analysis.Selection]
}

func newCapture(id string, b *bundle.Bundle, s *Store) *capture {
	return &capture{id: id, b: b, s: s, answers: answerCache{max: maxCachedAnswers}, run: analysisRun{wanted: make(chan struct{})}}
}

// Selection returns what suspect id counts, at the snapshot its figures
// are for (see analysis.Report.Select).
func (c *capture) Selection(id string) (analysis.Selection, error) {
	rep, err := c.Report()
	if err != nil {
		return analysis.Selection{}, err
	}
	c.selMu.Lock()
	if c.selections == nil {
		c.selections = map[string]*lazy[analysis.Selection]{}
	}
	l := c.selections[id]
	if l == nil {
		l = &lazy[analysis.Selection]{}
		c.selections[id] = l
	}
	c.selMu.Unlock()
	return l.get(func() (analysis.Selection, error) { return rep.Select(c.b, c.s.mem, id) })
}

// Ancestry returns the capture's goroutine creation tree.
func (c *capture) Ancestry() (*analysis.AncestryTree, error) {
	return c.ancestry.get(func() (*analysis.AncestryTree, error) {
		return analysis.Ancestry(c.b, c.s.mem)
	})
}

// Stacks returns the capture's frame and stack dictionaries.
func (c *capture) Stacks() (*flame.Stacks, error) {
	return c.stacks.get(func() (*flame.Stacks, error) {
		return flame.LoadStacks(c.b, c.s.mem)
	})
}

// Profiles returns the snapshot times of every profile in the samples
// table.
func (c *capture) Profiles() (map[string][]int64, error) {
	return c.profiles.get(func() (map[string][]int64, error) {
		return flame.Profiles(c.b, c.s.mem)
	})
}

// DumpSnapshots returns the snapshot times of the goroutines table.
func (c *capture) DumpSnapshots() ([]int64, error) {
	return c.dumps.get(func() ([]int64, error) {
		return flame.DumpSnapshots(c.b, c.s.mem)
	})
}

// Digest returns the digest of the capture's files (bundle.Digest).
func (c *capture) Digest() (string, error) {
	return c.digest.get(func() (string, error) { return bundle.Digest(c.b.Dir) })
}

// Size returns the bytes the capture's files take.
func (c *capture) Size() int64 {
	n, _ := c.size.get(func() (int64, error) { return bundle.DirSize(c.b.Dir), nil })
	return n
}

// Tables returns the row counts of the capture's tables.
func (c *capture) Tables() ([]bundle.TableInfo, error) {
	return c.tables.get(func() ([]bundle.TableInfo, error) {
		return c.b.Tables(c.s.mem)
	})
}

// lazy computes a value on first use; concurrent callers wait for the
// same computation. A failure — an error, or a panic turned into one — is
// not kept: the next caller tries again, so one bad moment does not fail
// every later request until the server restarts.
type lazy[T any] struct {
	mu   sync.Mutex
	done bool
	v    T
}

func (l *lazy[T]) get(fn func() (T, error)) (T, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return l.v, nil
	}
	v, err := protect(fn)
	if err != nil {
		return v, err
	}
	l.v, l.done = v, true
	return v, nil
}

// protect runs fn, turning a panic into an error (logged with its stack).
func protect[T any](fn func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			log.Printf("leakscope serve: panic: %v\n%s", r, debug.Stack())
			err = fmt.Errorf("internal error: %v", r)
		}
	}()
	return fn()
}

// answerCache keeps the encoded answers of recent queries, least recently
// used dropped first. Concurrent callers of the same key share one
// computation.
type answerCache struct {
	max   int
	mu    sync.Mutex
	order list.List // of *answer, most recent first
	byKey map[string]*list.Element
}

type answer struct {
	key    string
	once   sync.Once
	body   []byte
	status int
}

// get returns the answer for key, computing it with fn on a miss. Answers
// with a status of 500 or more are not kept.
func (a *answerCache) get(key string, fn func() ([]byte, int)) ([]byte, int) {
	a.mu.Lock()
	if a.byKey == nil {
		a.byKey = map[string]*list.Element{}
	}
	el, ok := a.byKey[key]
	if ok {
		a.order.MoveToFront(el)
	} else {
		el = a.order.PushFront(&answer{key: key})
		a.byKey[key] = el
		for a.order.Len() > a.max {
			last := a.order.Back()
			a.order.Remove(last)
			delete(a.byKey, last.Value.(*answer).key)
		}
	}
	ans := el.Value.(*answer)
	a.mu.Unlock()
	ans.once.Do(func() {
		var err error
		if ans.body, err = protect(func() ([]byte, error) {
			body, status := fn()
			ans.status = status
			return body, nil
		}); err != nil {
			ans.body, ans.status = encodeError(http.StatusInternalServerError, err.Error())
		}
	})
	if ans.status >= 500 {
		a.mu.Lock()
		if cur, ok := a.byKey[key]; ok && cur == el {
			a.order.Remove(el)
			delete(a.byKey, key)
		}
		a.mu.Unlock()
	}
	return ans.body, ans.status
}
