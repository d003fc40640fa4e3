package bundle

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// MaxBatchBytes is the most memory reading one table file may hold at
// once: the decoded buffers of its current record batch and its
// dictionaries. Every length read from a table file is checked against
// it, and against what is left of the file, before anything is
// allocated, so a small file claiming a huge buffer is refused instead of
// exhausting memory. A batch leakscope writes holds at most 64 Ki rows,
// far below it.
var MaxBatchBytes int64 = 512 << 20

// maxMetadataBytes bounds the flatbuffer metadata of one IPC message (a
// schema or a batch header; leakscope's are a few KiB).
const maxMetadataBytes = 16 << 20

// CorruptError reports a table file whose content is not a well-formed
// table: it contradicts itself, claims more than the file holds or more
// memory than [MaxBatchBytes], or does not match the table's schema. It is
// not a file cut short (that is a [*PartialError]): the bundle was damaged
// or made by hand, and no part of the table after ValidBatches is trusted.
type CorruptError struct {
	Path         string
	Offset       int64 // byte offset of the message at fault
	ValidBatches int
	Err          error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s: corrupt table (damaged, or not written by leakscope): at byte %d, after %d good batches: %v", e.Path, e.Offset, e.ValidBatches, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// messages reads the IPC messages of one table file for ipc.Reader,
// checking each length against the file's size and the memory budget
// before it allocates. It records whether the file ended inside a message
// (cut short) or broke the format (corrupt).
type messages struct {
	r    *bufio.Reader
	size int64 // file size
	off  int64 // bytes consumed so far
	at   int64 // offset of the current message
	mem  *budget
	msg  *ipc.Message

	short   bool  // the file ended inside a message
	corrupt error // why the file is not well-formed
	refs    atomic.Int64
}

func newMessages(r io.Reader, size int64, mem *budget) *messages {
	m := &messages{r: bufio.NewReaderSize(r, 64<<10), size: size, mem: mem}
	m.refs.Store(1)
	return m
}

// Retain and Release count references, as ipc.MessageReader requires.
func (m *messages) Retain() { m.refs.Add(1) }

// Release frees the last message once the last reference is gone.
func (m *messages) Release() {
	if m.refs.Add(-1) == 0 && m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
}

// Message returns the next message, io.EOF at the end of the stream.
func (m *messages) Message() (*ipc.Message, error) {
	if m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
	if m.corrupt != nil {
		return nil, m.corrupt
	}
	m.at = m.off
	var word [4]byte
	if err := m.read(word[:]); err != nil {
		return nil, err
	}
	metaLen := binary.LittleEndian.Uint32(word[:])
	switch metaLen {
	case 0:
		return nil, io.EOF // end-of-stream marker (old format)
	case 0xFFFFFFFF: // continuation marker, then the length
		if err := m.read(word[:]); err != nil {
			return nil, err
		}
		if metaLen = binary.LittleEndian.Uint32(word[:]); metaLen == 0 {
			return nil, io.EOF
		}
	}
	if int64(metaLen) > maxMetadataBytes {
		return nil, m.fail(fmt.Errorf("message metadata claims %s (at most %s allowed)", sizeText(int64(metaLen)), sizeText(maxMetadataBytes)))
	}
	if left := m.size - m.off; int64(metaLen) > left {
		m.short = true
		return nil, fmt.Errorf("message metadata of %d bytes, only %d left in the file: %w", metaLen, left, io.ErrUnexpectedEOF)
	}
	meta := make([]byte, metaLen)
	if err := m.read(meta); err != nil {
		return nil, err
	}
	if err := checkMetadata(meta); err != nil {
		return nil, m.fail(err)
	}
	bodyLen, err := bodyLength(meta)
	if err != nil {
		return nil, m.fail(err)
	}
	if bodyLen < 0 || bodyLen > m.mem.limit {
		return nil, m.fail(fmt.Errorf("message claims a body of %s, more than the %s a batch may take", sizeText(bodyLen), sizeText(m.mem.limit)))
	}
	if left := m.size - m.off; bodyLen > left {
		m.short = true
		return nil, fmt.Errorf("message body of %d bytes, only %d left in the file: %w", bodyLen, left, io.ErrUnexpectedEOF)
	}
	body := memory.NewResizableBuffer(m.mem)
	defer body.Release()
	if err := m.mem.try(func() { body.Resize(int(bodyLen)) }); err != nil {
		return nil, m.fail(err)
	}
	if err := m.read(body.Bytes()); err != nil {
		return nil, err
	}
	m.msg = ipc.NewMessage(memory.NewBufferBytes(meta), body)
	return m.msg, nil
}

// read fills b from the file, noting a file that ends inside a message.
func (m *messages) read(b []byte) error {
	n, err := io.ReadFull(m.r, b)
	m.off += int64(n)
	if err == io.EOF && m.off == m.at {
		return io.EOF // at a message boundary: a clean end
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		m.short = true
		return io.ErrUnexpectedEOF
	}
	return err
}

func (m *messages) fail(err error) error {
	m.corrupt = err
	return err
}

// bodyLength decodes the body length from a message's metadata, refusing
// metadata too malformed to decode.
func bodyLength(meta []byte) (n int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed message metadata: %v", r)
		}
	}()
	if len(meta) < 8 {
		return 0, fmt.Errorf("malformed message metadata (%d bytes)", len(meta))
	}
	msg := ipc.NewMessage(memory.NewBufferBytes(meta), memory.NewBufferBytes(nil))
	defer msg.Release()
	return msg.BodyLen(), nil
}

// budget is an allocator that refuses to hold more than limit bytes at
// once. A refused allocation panics (arrow's reader turns panics into
// errors) after recording why, so the reader can say so.
type budget struct {
	mem   memory.Allocator
	limit int64
	used  atomic.Int64
	err   atomic.Pointer[error]
}

func newBudget(mem memory.Allocator, limit int64) *budget {
	return &budget{mem: mem, limit: limit}
}

// Allocate implements memory.Allocator.
func (b *budget) Allocate(size int) []byte {
	b.take(int64(size))
	return b.mem.Allocate(size)
}

// Reallocate implements memory.Allocator.
func (b *budget) Reallocate(size int, buf []byte) []byte {
	b.take(int64(size) - int64(len(buf)))
	return b.mem.Reallocate(size, buf)
}

// Free implements memory.Allocator.
func (b *budget) Free(buf []byte) {
	b.used.Add(-int64(len(buf)))
	b.mem.Free(buf)
}

func (b *budget) take(n int64) {
	if n < 0 && b.used.Load()+n < 0 {
		b.refuse(fmt.Errorf("allocation of a negative size"))
	}
	if n > 0 && b.used.Add(n) > b.limit {
		b.used.Add(-n)
		b.refuse(fmt.Errorf("claims a buffer of %s, more than the %s a batch may take", sizeText(n), sizeText(b.limit)))
	}
}

func (b *budget) refuse(err error) {
	b.err.CompareAndSwap(nil, &err)
	panic(err)
}

// failure returns why an allocation was refused, or nil.
func (b *budget) failure() error {
	if p := b.err.Load(); p != nil {
		return *p
	}
	return nil
}

// try runs fn, turning a refused allocation into an error.
func (b *budget) try(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if ferr := b.failure(); ferr != nil {
				err = ferr
				return
			}
			panic(r)
		}
	}()
	fn()
	return nil
}

// sizeText writes a byte count exactly, with a binary-unit rounding.
func sizeText(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	v, u := float64(n)/1024, 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%d bytes (%.1f %s)", n, v, units[u])
}
