package report

import (
	"strings"
	"testing"
)

// TestBasisText: every origin basis the analysis writes reads as what it
// rests on, and no two read alike.
func TestBasisText(t *testing.T) {
	seen := map[string]string{}
	for _, b := range []string{"trace", "ebpf", "dump", "ebpf-gopc", "allocation", "served", "stacks", "source", "creator"} {
		txt := basisText(b)
		if other, ok := seen[txt]; ok || strings.HasPrefix(txt, "basis ") {
			t.Errorf("basis %q reads %q (as %q does)", b, txt, other)
		}
		seen[txt] = b
	}
}
