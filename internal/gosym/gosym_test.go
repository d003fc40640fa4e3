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

func TestElideTypeArgs(t *testing.T) {
	for in, want := range map[string]string{
		"main.main": "main.main",
		"sigs.k8s.io/controller-runtime/pkg/source.(*channel[go.shape.interface { GetName() string },sigs.k8s.io/controller-runtime/pkg/reconcile.TypedRequest[k8s.io/apimachinery/pkg/types.NamespacedName]]).Start": "sigs.k8s.io/controller-runtime/pkg/source.(*channel[...]).Start",
		"k8s.io/utils/buffer.NewTypedRingGrowing[go.shape.interface {}]": "k8s.io/utils/buffer.NewTypedRingGrowing[...]",
		"github.com/a/b.F[...]": "github.com/a/b.F[...]",
	} {
		if got := ElideTypeArgs(in); got != want {
			t.Errorf("ElideTypeArgs(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestClosureDepth checks how deep in literals a symbol names its
// function.
func TestClosureDepth(t *testing.T) {
	for sym, want := range map[string]int{
		"main.F": 0, "main.F.func1": 1, "main.F.func1.2": 2, "main.(*T).m.func3.1.1": 3,
		"main.init.0": 0, "main.init.0.func1": 1, "pkg.glob..func2": 1, "pkg.Outer.Inner.func1": 1,
		"pkg.Map[...].Get.func1": 1,
	} {
		if got := ClosureDepth(sym); got != want {
			t.Errorf("%s: %d, want %d", sym, got, want)
		}
	}
}
