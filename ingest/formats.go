package ingest

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/leakscope/leakscope/ingest/profiles"
)

// magics name file formats leakscope does not read, by their first bytes,
// so a refusal can say what the file is.
var magics = []struct {
	prefix, name string
}{
	{"PK\x03\x04", "a zip archive (unzip it and ingest the files inside)"},
	{"\xfd7zXZ\x00", "xz-compressed (decompress it first: xz -d)"},
	{"BZh", "bzip2-compressed (decompress it first: bzip2 -d)"},
	{"\x04\x22\x4d\x18", "lz4-compressed (decompress it first: lz4 -d)"},
	{"\x7fELF", "an ELF executable or core file, not a profile"},
	{"\x89PNG\r\n\x1a\n", "a PNG image"},
	{"%PDF-", "a PDF document"},
	{"FLR\x00", "a Java Flight Recorder recording, not a Go profile"},
	{"ARROW1", "an Arrow IPC file (a bundle's tables are opened with the bundle, not ingested)"},
	{"SQLite format 3\x00", "an SQLite database"},
}

// describeFormat says what head is, for the error refusing it.
func describeFormat(head []byte) string {
	if d := profiles.Foreign(head); d != "" {
		return d
	}
	for _, m := range magics {
		if bytes.HasPrefix(head, []byte(m.prefix)) {
			return m.name
		}
	}
	if looksText(head) {
		return fmt.Sprintf("text starting %q", preview(head))
	}
	return fmt.Sprintf("binary data starting % x", head[:min(len(head), 8)])
}

// preview returns the first line of head, cut to 40 bytes.
func preview(head []byte) string {
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	if len(head) > 40 {
		head = head[:40]
		for len(head) > 0 && !utf8.Valid(head) {
			head = head[:len(head)-1]
		}
		return string(head) + "…"
	}
	return string(head)
}
