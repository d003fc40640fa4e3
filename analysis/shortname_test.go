package analysis

import "testing"

// TestShortNameKeepsWholeNames: only the import path is dropped; a slash
// inside the name (a hostile or odd symbol) does not cut it.
func TestShortNameKeepsWholeNames(t *testing.T) {
	for in, want := range map[string]string{
		"k8s.io/client-go/informers.(*sharedInformerFactory).Start": "informers.(*sharedInformerFactory).Start",
		"github.com/me/app/pkg.Func.func1":                          "pkg.Func.func1",
		"main.evil<script>x</script>":                               "main.evil<script>x</script>",
		"main.(*T).f</b>":                                           "main.(*T).f</b>",
		"example.com/a/b.F[go.shape.struct { X other/pkg.T }]":      "b.F[...]",
		"main.main": "main.main",
	} {
		if got := shortName(in); got != want {
			t.Errorf("shortName(%q) = %q, want %q", in, got, want)
		}
	}
}
