package format

import "testing"

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"main.(*T).run":              "main.(*T).run",
		"\x1b]0;pwned\x07main.f":     `\x1b]0;pwned\x07main.f`,
		"a\nb\tc":                    `a\x0ab\x09c`,
		"bad \xff\xfe utf8":          `bad \xff\xfe utf8`,
		"rtl \u202eexe.txt":          `rtl \u202eexe.txt`,
		"\u00e9t\u00e9 \u4e16\u754c": "\u00e9t\u00e9 \u4e16\u754c",
		"\u0085 next line":           `\x85 next line`,
		"\uFFFD as text":             "\uFFFD as text",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Lines("one\n\ttwo\x1b[2J"); got != "one\n\ttwo\\x1b[2J" {
		t.Errorf("Lines kept %q", got)
	}
}
