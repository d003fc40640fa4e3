package ingest

import (
	"bytes"
	"encoding/binary"
	"io"
	"unicode/utf8"

	"github.com/leakscope/leakscope/ingest/dump"
	"github.com/leakscope/leakscope/ingest/gotrace"
	"github.com/leakscope/leakscope/ingest/profiles"
)

// Kind is what a file holds.
type Kind string

// The kinds [Detect] recognises.
const (
	KindUnknown Kind = ""
	KindPprof   Kind = "pprof"
	KindDump    Kind = "dump"
	KindTrace   Kind = "trace"
	// KindLog is text that starts as none of the others, such as an
	// application log: a traceback or race report may come anywhere in
	// it, so it is read as a dump, whole, and refused if it holds none.
	KindLog Kind = "log"
)

// sniffLen is how much of a file Detect looks at.
const sniffLen = 64 << 10

// Detect recognises the kind of content from its first bytes (up to 64
// KiB; pass the start of the file). Gzip- and zstd-compressed content is
// recognised by what it decompresses to.
func Detect(head []byte) Kind {
	if isGzip(head) || isZstd(head) {
		// head may cut the stream: look at what it decompresses to.
		zr, _, closeFn, err := decompressor(bytes.NewReader(head), head, sniffLen)
		if err != nil {
			return KindUnknown
		}
		defer closeFn()
		inner := make([]byte, sniffLen)
		n, _ := io.ReadFull(zr, inner)
		if n == 0 {
			return KindUnknown
		}
		return detectContent(inner[:n])
	}
	return detectContent(head)
}

// detectContent recognises uncompressed content from its first bytes.
func detectContent(head []byte) Kind {
	switch {
	case gotrace.Looks(head):
		return KindTrace
	case dump.Looks(head):
		return KindDump
	case profiles.LooksLegacy(head) && profiles.Foreign(head) == "":
		return KindPprof
	case looksProtobuf(head):
		// The Go runtime writes protobuf profiles (gzipped).
		return KindPprof
	case looksText(head) && profiles.Foreign(head) == "":
		return KindLog
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

// looksText reports whether head is text: valid UTF-8 (a cut last rune
// allowed) with no NUL and few other control characters.
func looksText(head []byte) bool {
	if len(head) == 0 || bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	sample := head[:min(len(head), 8<<10)]
	ctl := 0
	for i := 0; i < len(sample); {
		r, n := utf8.DecodeRune(sample[i:])
		if r == utf8.RuneError && n == 1 {
			if len(sample)-i >= utf8.UTFMax {
				return false
			}
			break // a rune cut by the end of head
		}
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' && r != 0x1b {
			ctl++
		}
		i += n
	}
	return ctl*100 <= len(sample)
}
