package gotrace

import (
	"github.com/leakscope/leakscope/ingest/bundle"
)

// stackCache gives the stacks of a trace local ids without touching the
// bundle writer, whose lock the sink goroutine holds while it compresses a
// batch. The sink turns local ids into bundle stack ids (see [sink])
// before it writes a batch: each batch carries the stacks first seen since
// the previous one.
//
// Each generation has its own stack table; the decoder lists the stacks a
// generation uses with a key made of their frames, and the cache maps
// equal keys of every generation to one id.
type stackCache struct {
	content map[string]int64
	roots   []string              // outermost function by local id
	fresh   [][]bundle.StackFrame // frames of local ids next+1-len(fresh) … next
	next    int64
}

func newStackCache() *stackCache {
	return &stackCache{content: make(map[string]int64), roots: []string{""}}
}

// resolve appends to ids the local id of each stack, adding new ones.
func (c *stackCache) resolve(ids []int64, stacks []genStack) []int64 {
	for i := range stacks {
		ids = append(ids, c.id(&stacks[i]))
	}
	return ids
}

// id returns the local id of s, adding it when new.
func (c *stackCache) id(s *genStack) int64 {
	id, ok := c.content[s.key]
	if !ok {
		c.next++
		id = c.next
		c.content[s.key] = id
		c.fresh = append(c.fresh, s.frames)
		c.roots = append(c.roots, s.root)
	}
	return id
}

// takeFresh returns the frames of the local ids assigned since the last
// call, in id order.
func (c *stackCache) takeFresh() [][]bundle.StackFrame {
	f := c.fresh
	c.fresh = nil
	return f
}
