package report

import "testing"

// TestShortFnKeepsHostileNames: a heap site or suspect named with a slash
// after its package's name ("main.evil</script>") is shown whole in the
// report, not from its last slash on ("script>").
func TestShortFnKeepsHostileNames(t *testing.T) {
	for in, want := range map[string]string{
		"main.evil<script>alert(1)</script>":          "main.evil<script>alert(1)</script>",
		"example.com/svc/cache.(*LRU).Add":            "cache.(*LRU).Add",
		"example.com/svc/cache.New[go.shape.int]":     "cache.New[...]",
		"example.com/svc/h.alloc</script>\x00<b>x/y>": "h.alloc</script>\x00<b>x/y>",
	} {
		if got := shortFn(in); got != want {
			t.Errorf("shortFn(%q) = %q, want %q", in, got, want)
		}
	}
}
