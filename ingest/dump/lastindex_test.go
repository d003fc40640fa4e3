package dump

import (
	"bytes"
	"testing"
)

// TestLastIndexByte: the forward search finds what bytes.LastIndexByte
// finds.
func TestLastIndexByte(t *testing.T) {
	for _, s := range []string{"", ":", "a:b", "::", "/src/a.go:12 +0x1d fp=0x1 sp=0x2 pc=0x3", "no colon", "x:" + string(bytes.Repeat([]byte("y"), 300)), "C:\\go\\a.go:7"} {
		if got, want := lastIndexByte([]byte(s), ':'), bytes.LastIndexByte([]byte(s), ':'); got != want {
			t.Errorf("lastIndexByte(%q) = %d, want %d", s, got, want)
		}
	}
}
