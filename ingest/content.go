package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/klauspost/compress/zstd"
)

// DefaultMaxDecompressed is the most a compressed input may expand to
// when [Options.MaxDecompressed] is zero: far above any real profile,
// dump or trace, far below what a small decompression bomb would write.
const DefaultMaxDecompressed int64 = 16 << 30

// maxZstdWindow bounds the memory a zstd stream may ask for.
const maxZstdWindow = 256 << 20

// maxSpool bounds the original bytes held in memory while the kind of a
// compressed input is being found out.
const maxSpool = 8 << 20

// ErrTooLarge is wrapped by the error for an input that decompresses to
// more than the limit.
var ErrTooLarge = errors.New("decompresses to more than the limit")

// content is an input opened for ingest: decompressed (gzip and zstd, the
// same for every kind), its first bytes sniffed and its kind detected.
// The original bytes are held until attach names where they are kept.
type content struct {
	spool       *spool
	orig        *bufio.Reader // the original bytes, through spool
	r           *bufio.Reader // the decompressed content
	head        []byte
	kind        Kind
	compression string // "gzip", "zstd" or ""
	close       func()
	cutAt       *cutStream // the compressed stream, to see whether it was cut
}

// openContent opens r for ingest, allowing it to decompress to at most max
// bytes (0: DefaultMaxDecompressed).
func openContent(r io.Reader, max int64) (*content, error) {
	if max <= 0 {
		max = DefaultMaxDecompressed
	}
	c := &content{spool: &spool{r: r, max: maxSpool, hash: sha256.New()}, close: func() {}}
	c.orig = bufio.NewReaderSize(c.spool, 64<<10)
	magic, err := c.orig.Peek(4)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, fmt.Errorf("read: %w", err)
	}
	plain, name, closeFn, err := decompressor(c.orig, magic, max)
	if err != nil {
		return nil, err
	}
	c.compression, c.close = name, closeFn
	if c.compression != "" {
		c.cutAt = &cutStream{r: &limited{r: plain, left: max, max: max, what: c.compression}, c: c}
		plain = c.cutAt
	}
	c.r = bufio.NewReaderSize(plain, sniffLen)
	c.head, err = c.r.Peek(sniffLen)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		c.close()
		if c.compression != "" {
			return nil, fmt.Errorf("corrupt or truncated %s stream: %w", c.compression, err)
		}
		return nil, fmt.Errorf("read: %w", err)
	}
	c.kind = detectContent(c.head)
	return c, nil
}

// attach starts keeping the original bytes in raw (those read so far,
// then the rest as they are read) and returns the decompressed content.
func (c *content) attach(raw io.Writer) (io.Reader, error) {
	if err := c.spool.attach(raw); err != nil {
		return nil, err
	}
	return c.r, nil
}

// finish keeps the rest of the original, where the parser stopped early,
// and releases the decompressor.
func (c *content) finish() error {
	defer c.close()
	// Bytes orig buffered were already kept; read the rest through the
	// spool.
	_, err := io.Copy(io.Discard, c.spool)
	return err
}

// keepWhole is attach and finish for an input read at random (see
// addition.whole): on a goroutine of its own, while the parser reads
// the input, it copies all of it into raw, hashing it as it goes. The
// function it returns waits for the copy and releases the decompressor.
func (c *content) keepWhole(r *io.SectionReader, raw io.Writer) (wait func() error) {
	c.spool.hash.Reset()
	done := make(chan error, 1)
	go func() {
		n, err := io.Copy(io.MultiWriter(raw, c.spool.hash), io.NewSectionReader(r, 0, r.Size()))
		c.spool.n = n
		if err != nil {
			err = fmt.Errorf("keep the original: %w", err)
		}
		done <- err
	}()
	return func() error {
		defer c.close()
		return <-done
	}
}

// sum returns the SHA-256 of the original, once finish has read it all.
func (c *content) sum() string { return hex.EncodeToString(c.spool.hash.Sum(nil)) }

// unknown describes content of no kind leakscope reads.
func (c *content) unknown() error {
	if len(c.head) == 0 {
		switch {
		case c.cutAt != nil && c.cutAt.cut:
			return fmt.Errorf("%w: it is %s-compressed, and the stream ends before any of its content", ErrUnknownKind, c.compression)
		case c.compression != "":
			return fmt.Errorf("%w: it is %s-compressed and decompresses to nothing", ErrUnknownKind, c.compression)
		}
		return fmt.Errorf("empty file: %w", ErrUnknownKind)
	}
	what := describeFormat(c.head)
	if c.compression != "" {
		what = c.compression + "-compressed " + what
	}
	return fmt.Errorf("%w: it is %s", ErrUnknownKind, what)
}

// decompressor returns a reader of r decompressed when magic starts a
// gzip or zstd stream (named by name), r itself otherwise. This is the one
// place inputs are decompressed, whatever their kind.
func decompressor(r io.Reader, magic []byte, max int64) (plain io.Reader, name string, closeFn func(), err error) {
	switch {
	case isGzip(magic):
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, "", nil, fmt.Errorf("corrupt gzip header: %w", err)
		}
		return zr, "gzip", func() { zr.Close() }, nil
	case isZstd(magic):
		zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderMaxMemory(uint64(max)))
		if err != nil {
			return nil, "", nil, fmt.Errorf("zstd: %w", err)
		}
		return zr, "zstd", zr.Close, nil
	}
	return r, "", func() {}, nil
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }
func isZstd(b []byte) bool { return len(b) >= 4 && bytes.Equal(b[:4], []byte{0x28, 0xb5, 0x2f, 0xfd}) }

// spool passes reads through, keeping what it read: in memory (up to max)
// until attach, then in the attached writer.
type spool struct {
	r    io.Reader
	buf  bytes.Buffer
	max  int
	w    io.Writer
	hash hash.Hash // of every byte read
	n    int64     // bytes read
}

func (s *spool) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.n += int64(n)
		s.hash.Write(p[:n])
		if s.w != nil {
			if _, werr := s.w.Write(p[:n]); werr != nil {
				return n, fmt.Errorf("keep the original: %w", werr)
			}
		} else {
			if s.buf.Len()+n > s.max {
				return n, fmt.Errorf("its first %d bytes decompress to too little to tell what it is", s.max)
			}
			s.buf.Write(p[:n])
		}
	}
	return n, err
}

func (s *spool) attach(w io.Writer) error {
	if _, err := w.Write(s.buf.Bytes()); err != nil {
		return fmt.Errorf("keep the original: %w", err)
	}
	s.buf = bytes.Buffer{}
	s.w = w
	return nil
}

// cutStream ends a compressed stream that stops before its end (a file
// cut short) at what it decompressed, and records that it did: parsers of
// dumps, logs and traces keep the complete part of a cut input; a profile,
// which must be whole, is refused (see cutShort).
type cutStream struct {
	r   io.Reader
	c   *content
	cut bool
}

func (s *cutStream) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		s.cut = true
		return n, io.EOF
	}
	return n, err
}

// cutShort says, once parsing ended, whether the compressed stream was cut
// before its end ("" if not).
func (c *content) cutShort() string {
	if c.cutAt == nil || !c.cutAt.cut {
		return ""
	}
	return fmt.Sprintf("the %s stream ends early, after %d bytes of the file; its complete part was kept", c.compression, c.spool.n)
}

// limited fails a decompressed stream that goes past max bytes.
type limited struct {
	r         io.Reader
	left, max int64
	what      string
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, fmt.Errorf("%s content %w of %d bytes; refusing what may be a decompression bomb", l.what, ErrTooLarge, l.max)
	}
	if int64(len(p)) > l.left {
		p = p[:l.left+1] // one byte more tells a stream at the limit from one past it
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n - 1, fmt.Errorf("%s content %w of %d bytes; refusing what may be a decompression bomb", l.what, ErrTooLarge, l.max)
	}
	return n, err
}
