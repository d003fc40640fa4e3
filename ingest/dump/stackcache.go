package dump

import (
	"encoding/binary"
	"unsafe"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// maxCachedStacks bounds stackCache; past it the cache starts afresh.
const maxCachedStacks = 1 << 14

// stackCache remembers the bundle stack id of each stack of frames by the
// identity of its strings: the reader interns function and file names, so
// the goroutines of a dump that share a stack share its strings too, and a
// key of their addresses, lengths and lines is found without hashing the
// names (which bundle.Writer.StackID does, frame by frame). Strings that
// are equal but not the same (names past the reader's intern table) only
// miss. Each entry keeps its frames, so no string whose address is a key
// can be freed and its memory reused for another.
type stackCache struct {
	ids map[string]cachedStack
	key []byte
}

type cachedStack struct {
	id     int64
	frames []bundle.StackFrame
}

// id returns the stack id of frames, interning it in w when it is new
// to the cache.
func (c *stackCache) id(w *bundle.Writer, frames []bundle.StackFrame) (int64, error) {
	if len(frames) == 0 {
		return 0, nil
	}
	c.key = c.key[:0]
	for _, f := range frames {
		c.key = binary.LittleEndian.AppendUint64(c.key, uint64(uintptr(unsafe.Pointer(unsafe.StringData(f.Function)))))
		c.key = binary.LittleEndian.AppendUint64(c.key, uint64(uintptr(unsafe.Pointer(unsafe.StringData(f.File)))))
		c.key = binary.AppendUvarint(c.key, uint64(len(f.Function)))
		c.key = binary.AppendUvarint(c.key, uint64(len(f.File)))
		inl := uint64(0)
		if f.Inlined {
			inl = 1
		}
		c.key = binary.AppendUvarint(c.key, uint64(f.Line)<<1|inl)
	}
	if s, ok := c.ids[string(c.key)]; ok {
		return s.id, nil
	}
	id, err := w.StackID(frames)
	if err != nil {
		return 0, err
	}
	if c.ids == nil || len(c.ids) >= maxCachedStacks {
		c.ids = make(map[string]cachedStack)
	}
	c.ids[string(c.key)] = cachedStack{id: id, frames: append([]bundle.StackFrame(nil), frames...)}
	return id, nil
}
