package report

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
)

// FuzzNames renders arbitrary names, as a hostile input can name functions
// and files, inside report markup: the HTML must be the name escaped, and
// the Markdown, rendered by a CommonMark implementation with raw HTML
// allowed, must show the same text with no tag from the name.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"main.f", "main.evil\x00<script>x</script>", "a`b``c", "`", " ` ", "*x* _y_ [z](u) <b>&amp;", "\xff\xfe", "x|y", "\u202eevil", "\ue000\ue001\ue005"} {
		f.Add(s)
	}
	md := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	f.Fuzz(func(t *testing.T, name string) {
		shown := clean(name)
		if got, want := htmlInline("**at:** "+code(name)+" "+lit(name)), "<strong>at:</strong> <code>"+html.EscapeString(shown)+"</code> "+html.EscapeString(shown); got != want {
			t.Fatalf("HTML of %q:\n got  %q\n want %q", name, got, want)
		}
		var out bytes.Buffer
		if err := md.Convert([]byte(mdInline("at "+code(name)+" and "+lit(name))+"\n"), &out); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		if strings.Contains(strings.ReplaceAll(strings.ReplaceAll(got, "<p>", ""), "</p>", ""), "<") && !strings.Contains(got, "<code>") {
			t.Fatalf("markdown of %q renders a tag: %q", name, got)
		}
		for _, tag := range []string{"<script", "<b>", "<a ", "<img", "<em>", "<strong>"} {
			if strings.Contains(got, tag) {
				t.Fatalf("markdown of %q renders %s: %q", name, tag, got)
			}
		}
		if shown != "" && !strings.Contains(html.UnescapeString(got), strings.TrimSpace(shown)) && strings.TrimSpace(shown) != "" {
			t.Fatalf("markdown of %q does not show %q: %q", name, shown, got)
		}
	})
}
