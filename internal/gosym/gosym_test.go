package gosym

import (
	"strings"
	"testing"
)

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
// function. A bare number after a named segment is a literal of a
// function inlined into a literal (G's in main.H.func1), and funcN after
// funcN one of a literal inlined into its function (main.F.func1's in
// main.F): names go build gives (see [Enclosing]).
func TestClosureDepth(t *testing.T) {
	for sym, want := range map[string]int{
		"main.F": 0, "main.F.func1": 1, "main.F.func1.2": 2, "main.(*T).m.func3.1.1": 3,
		"main.init.0": 0, "main.init.0.func1": 1, "pkg.glob..func2": 1, "pkg.Outer.Inner.func1": 1,
		"pkg.Map[...].Get.func1": 1, "main.init.func1.1": 2,
		"main.H.func1.G.2": 1, "main.F.1": 1, "main.F.F.func1.func4": 2, "main.F.G.func5": 1,
	} {
		if got := ClosureDepth(sym); got != want {
			t.Errorf("%s: %d, want %d", sym, got, want)
		}
	}
}

// TestNumbered checks which symbol segments the compiler names.
func TestNumbered(t *testing.T) {
	for seg, want := range map[string]bool{
		"func1": true, "2": true, "0": true, "gowrap1": true, "deferwrap3": true, "": true,
		"func": false, "gowrap": false, "F": false, "funcName": false, "(*T)": false, "init": false,
	} {
		if got := Numbered(seg); got != want {
			t.Errorf("Numbered(%q) = %v, want %v", seg, got, want)
		}
	}
}

// TestWrapper checks the go and defer statements' wrappers.
func TestWrapper(t *testing.T) {
	for fn, want := range map[string]bool{
		"main.F.gowrap1": true, "main.(*T).m.deferwrap2": true, "main.init.0.gowrap3": true,
		"main.F": false, "main.F.func1": false, "main.gowrap": false, "main.gowrapper": false, "main.F.gowrap1.func1": false,
	} {
		if got := Wrapper(fn); got != want {
			t.Errorf("Wrapper(%q) = %v, want %v", fn, got, want)
		}
	}
}

// TestClosureParent checks the function a literal is declared in.
func TestClosureParent(t *testing.T) {
	for fn, want := range map[string]string{
		"main.F.func1": "main.F", "main.F.func1.2": "main.F", "main.(*T).m.func3.1.1": "main.(*T).m",
		"pkg.G[...].func1": "pkg.G[...]", "main.init.0.func1": "main.init.0",
		"main.F": "", "main.init.0": "", "main.F.gowrap1": "", "main.init.0.gowrap1": "",
		"main.TestX.func10": "main.TestX", "k8s.io/x/v2.f.func1": "k8s.io/x/v2.f",
		"main.H.func1.G.2": "main.H.func1.G", "main.F.1": "main.F",
	} {
		if got := ClosureParent(fn); got != want {
			t.Errorf("ClosureParent(%q) = %q, want %q", fn, got, want)
		}
	}
}

// TestEnclosing checks the functions a literal is nested in, with the
// names inlining gives (see TestClosureDepth).
func TestEnclosing(t *testing.T) {
	for fn, want := range map[string]string{
		"main.F.func1.2": "main.F.func1 main.F", "main.F.func1.func2": "main.F.func1 main.F",
		"main.funcHelper": "", "main.funcHelper.func1": "main.funcHelper", "main.init.0.func1": "main.init.0", "main.F": "",
		"main.init.0": "", "main.init.func1.1": "main.init.func1 main.init",
		"main.H.func1.G.2": "main.H.func1.G", "main.F.1": "main.F", "main.F.F.func1.func4": "main.F.F.func1 main.F.F",
	} {
		if got := strings.Join(Enclosing(fn), " "); got != want {
			t.Errorf("Enclosing(%q) = %q, want %q", fn, got, want)
		}
	}
}
