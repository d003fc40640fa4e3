package gotrace

import (
	"encoding/binary"

	"golang.org/x/exp/trace"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// stackInfo is what ingest keeps about one trace stack.
type stackInfo struct {
	id   int64  // local stack id (see stackCache), 0 for an empty stack
	root string // outermost function other than runtime.goexit
}

// stackCache gives trace stacks local ids without touching the bundle
// writer, whose lock the sink goroutine holds while it compresses a batch.
// The sink turns local ids into bundle stack ids (see [sink]) before it
// writes a batch: each batch carries the stacks first seen since the
// previous one.
//
// A trace.Stack is a comparable handle into one generation's stack table,
// so the first level is keyed by the handle and cleared at each
// generation: the lookup of a known stack is one map access. The second
// level, keyed by the frames' content, keeps every stack of this trace so
// that a new generation's handles resolve to the same ids.
type stackCache struct {
	m       map[trace.Stack]stackInfo
	content map[string]stackInfo
	key     []byte
	fresh   [][]bundle.StackFrame // frames of local ids next+1-len(fresh) … next
	next    int64
	// the last handle looked up: a goroutine often blocks where the
	// previous one did.
	lastS  trace.Stack
	lastSI stackInfo
}

func newStackCache() *stackCache {
	return &stackCache{m: make(map[trace.Stack]stackInfo), content: make(map[string]stackInfo)}
}

// reset forgets the cached handles (their generation is over).
func (c *stackCache) reset() {
	clear(c.m)
	c.lastS, c.lastSI = trace.NoStack, stackInfo{}
}

// get returns the local id and root function of s.
func (c *stackCache) get(s trace.Stack) stackInfo {
	if s == trace.NoStack {
		return stackInfo{}
	}
	if s == c.lastS {
		return c.lastSI
	}
	si, ok := c.m[s]
	if !ok {
		si = c.lookup(s)
	}
	c.lastS, c.lastSI = s, si
	return si
}

// lookup returns the stack info of a handle not yet cached.
func (c *stackCache) lookup(s trace.Stack) stackInfo {
	var frames []bundle.StackFrame
	c.key = c.key[:0]
	for f := range s.Frames() {
		frames = append(frames, bundle.StackFrame{Function: f.Func, File: f.File, Line: int64(f.Line)})
		c.key = append(c.key, f.Func...)
		c.key = append(c.key, 0)
		c.key = append(c.key, f.File...)
		c.key = binary.AppendUvarint(append(c.key, 0), f.Line)
	}
	if si, ok := c.content[string(c.key)]; ok {
		c.m[s] = si
		return si
	}
	var si stackInfo
	for i := len(frames) - 1; i >= 0; i-- {
		if fn := frames[i].Function; fn != "runtime.goexit" && fn != "" {
			si.root = fn
			break
		}
	}
	if len(frames) > 0 {
		c.next++
		si.id = c.next
		c.fresh = append(c.fresh, frames)
	}
	c.m[s] = si
	c.content[string(c.key)] = si
	return si
}

// takeFresh returns the frames of the local ids assigned since the last
// call, in id order.
func (c *stackCache) takeFresh() [][]bundle.StackFrame {
	f := c.fresh
	c.fresh = nil
	return f
}
