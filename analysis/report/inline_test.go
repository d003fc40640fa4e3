package report

import "testing"

func TestInlineKeepsGoNames(t *testing.T) {
	cases := map[string]string{
		"created by main.(*A).f in main.(*B).g":   "created by main.(*A).f in main.(*B).g",
		"**Parked at:** `main.(*T).run` (a.go:3)": "<strong>Parked at:</strong> <code>main.(*T).run</code> (a.go:3)",
		"a `x<y` b":  "a <code>x&lt;y</code> b",
		"odd ` tick": "odd ` tick",
	}
	for in, want := range cases {
		if got := inline(in); got != want {
			t.Errorf("inline(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMarkdownEscapes(t *testing.T) {
	for in, want := range map[string]string{
		code("main.f"):         "`main.f`",
		code("a`b"):            "``a`b``",
		code("`x"):             "`` `x ``",
		code("a``b`"):          "``` a``b` ```",
		code("nul\x00tab\t"):   "`nul\\x00tab\\x09`",
		lit("<b>*x*_y_[z]&"):   "\\<b\\>\\*x\\*\\_y\\_\\[z\\]\\&",
		"**b** <i>" + lit("q"): "**b** &lt;i>q",
		"`<ok>` <no>":          "`<ok>` &lt;no>",
	} {
		if got := mdInline(in); got != want {
			t.Errorf("mdInline(%q) = %q, want %q", in, got, want)
		}
	}
	if got := htmlInline("*" + lit("a*b") + "* " + code("<x>")); got != "<em>a*b</em> <code>&lt;x&gt;</code>" {
		t.Errorf("htmlInline = %q", got)
	}
	if got := mdFence("x\n````\ny"); got != "`````" {
		t.Errorf("mdFence = %q", got)
	}
}
