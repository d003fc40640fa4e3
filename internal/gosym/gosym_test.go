package gosym

import "testing"

func TestStripTypeArgs(t *testing.T) {
	for in, want := range map[string]string{
		"main.f":                   "main.f",
		"pkg.F[...]":               "pkg.F",
		"pkg.(*T[go.shape.int]).M": "pkg.(*T).M",
		"pkg.(*T[go.shape.struct { F [2]int }]).M": "pkg.(*T).M",
		"pkg.G[...].func1":                         "pkg.G.func1",
		"odd]name":                                 "odd]name",
	} {
		if got := StripTypeArgs(in); got != want {
			t.Errorf("StripTypeArgs(%q) = %q, want %q", in, got, want)
		}
	}
}
