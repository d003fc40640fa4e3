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
