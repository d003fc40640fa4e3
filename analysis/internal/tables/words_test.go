package tables

import "testing"

// TestArgsWords: the words that can be addresses, with their positions,
// and single words by position, never one marked "?".
func TestArgsWords(t *testing.T) {
	ws := PointerWords("0x1d202adfc0b0?, 0x6, {0x78f980, 0x5237cd905a0}, 0x0?", nil)
	want := []Word{{V: 0x1d202adfc0b0, Pos: 0, Unsure: true}, {V: 0x78f980, Pos: 2}, {V: 0x5237cd905a0, Pos: 3}}
	if len(ws) != len(want) {
		t.Fatalf("pointerWords = %+v, want %+v", ws, want)
	}
	for i := range ws {
		if ws[i] != want[i] {
			t.Errorf("word %d = %+v, want %+v", i, ws[i], want[i])
		}
	}
	if _, ok := FirstWord("0x1d202adfc0b0?, 0x6"); ok {
		t.Error("firstWord took a word marked ? as identity")
	}
	if v, ok := WordAt("0x5237cce4290, 0x21c", 1); !ok || v != 0x21c {
		t.Errorf("wordAt(…, 1) = %#x, %v; want the ticket 0x21c", v, ok)
	}
	if _, ok := WordAt("0x5237cce4290, 0x21c?", 1); ok {
		t.Error("wordAt read an unsure ticket")
	}
}
