package bundle

import (
	"math/bits"
	"sync"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// bufferPool is a memory.Allocator that keeps freed buffers of 64 KiB and
// more for reuse, by power-of-two size class. Arrow's IPC writer allocates
// a buffer as large as each column it compresses and frees it once the
// batch is written, so without a pool every batch is garbage the size of
// its data; with one, a table writer reuses the same few buffers. Reused
// buffers are zeroed, as fresh ones are.
type bufferPool struct {
	mem  memory.Allocator
	mu   sync.Mutex
	free [64][][]byte // by log2 of the capacity
}

const (
	poolMinBits = 16 // smaller buffers come from mem
	poolPerSize = 4  // buffers kept per size class
)

// sharedPool serves every table writer.
var sharedPool = &bufferPool{mem: memory.DefaultAllocator}

func (p *bufferPool) class(size int) int { return bits.Len(uint(size - 1)) }

// Allocate implements memory.Allocator.
func (p *bufferPool) Allocate(size int) []byte {
	if size < 1<<poolMinBits {
		return p.mem.Allocate(size)
	}
	c := p.class(size)
	p.mu.Lock()
	if n := len(p.free[c]); n > 0 {
		b := p.free[c][n-1]
		p.free[c] = p.free[c][:n-1]
		p.mu.Unlock()
		b = b[:size]
		clear(b)
		return b
	}
	p.mu.Unlock()
	return p.mem.Allocate(1 << c)[:size]
}

// Reallocate implements memory.Allocator.
func (p *bufferPool) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free implements memory.Allocator.
func (p *bufferPool) Free(b []byte) {
	n := cap(b)
	if n < 1<<poolMinBits || n&(n-1) != 0 {
		return // not one of ours
	}
	c := p.class(n)
	p.mu.Lock()
	if len(p.free[c]) < poolPerSize {
		p.free[c] = append(p.free[c], b[:0])
	}
	p.mu.Unlock()
}
