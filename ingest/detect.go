package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"

	"github.com/leakscope/leakscope/ingest/dump"
	"github.com/leakscope/leakscope/ingest/gotrace"
)

// Kind is what a file holds.
type Kind string

// The kinds [Detect] recognises.
const (
	KindUnknown Kind = ""
	KindPprof   Kind = "pprof"
	KindDump    Kind = "dump"
	KindTrace   Kind = "trace"
)

// sniffLen is how much of a file Detect looks at.
const sniffLen = 64 << 10

// Detect recognises the kind of content from its first bytes (up to 64
// KiB; pass the start of the file). Gzipped content is recognised by what
// it decompresses to.
func Detect(head []byte) Kind {
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(head))
		if err != nil {
			return KindUnknown
		}
		inner := make([]byte, sniffLen)
		n, _ := io.ReadFull(zr, inner)
		if n == 0 {
			return KindUnknown
		}
		if k := detectPlain(inner[:n]); k != KindUnknown {
			return k
		}
		// The Go runtime gzips its protobuf profiles.
		if looksProtobuf(inner[:n]) {
			return KindPprof
		}
		return KindUnknown
	}
	if k := detectPlain(head); k != KindUnknown {
		return k
	}
	if looksProtobuf(head) {
		return KindPprof
	}
	return KindUnknown
}

func detectPlain(head []byte) Kind {
	switch {
	case gotrace.Looks(head):
		return KindTrace
	case dump.Looks(head):
		return KindDump
	case looksLegacyProfile(head):
		return KindPprof
	}
	return KindUnknown
}

// profileWireTypes gives the protobuf wire type of each field of pprof's
// Profile message (fields 1 to 14): 2 for messages, strings and packed
// numbers, 0 for varints.
var profileWireTypes = [15]int8{-1, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 2, 0, 0, 0}

// looksProtobuf reports whether head starts like a pprof Profile message:
// its first fields (up to eight, or as many as head holds) are well-formed
// fields of that message.
func looksProtobuf(head []byte) bool {
	fields := 0
	for len(head) > 0 && fields < 8 {
		key, n := binary.Uvarint(head)
		if n <= 0 {
			return false
		}
		head = head[n:]
		num, wire := key>>3, int8(key&7)
		if num == 0 || num >= uint64(len(profileWireTypes)) {
			return false
		}
		if want := profileWireTypes[num]; wire != want && !(num == 13 && wire == 2) {
			return false
		}
		switch wire {
		case 0:
			if _, n := binary.Uvarint(head); n <= 0 {
				return n == 0 && fields > 0 // cut off by the end of head
			} else {
				head = head[n:]
			}
		case 2:
			l, n := binary.Uvarint(head)
			if n <= 0 {
				return n == 0 && fields > 0
			}
			head = head[n:]
			if l > uint64(len(head)) {
				return true // the field runs past what we looked at
			}
			head = head[l:]
		}
		fields++
	}
	return fields > 0
}

// legacyPrefixes start the text profiles pprof still parses.
var legacyPrefixes = [][]byte{
	[]byte("heap profile:"),
	[]byte("--- contention:"),
	[]byte("--- mutex:"),
	[]byte("threadcreate profile:"),
	[]byte("goroutine profile:"),
	[]byte("--- heapz"),
}

func looksLegacyProfile(head []byte) bool {
	for _, p := range legacyPrefixes {
		if bytes.HasPrefix(head, p) {
			return true
		}
	}
	return false
}

// sniff returns a reader that yields all of r and the first bytes of it.
func sniff(r io.Reader) (io.Reader, []byte, error) {
	br := bufio.NewReaderSize(r, sniffLen)
	head, err := br.Peek(sniffLen)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, nil, err
	}
	return br, head, nil
}
