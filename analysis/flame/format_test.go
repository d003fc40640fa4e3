package flame

import "testing"

func TestPackagePath(t *testing.T) {
	for fn, want := range map[string]string{
		"main.main":                                     "main",
		"main.(*controller).reconcile.func1":            "main",
		"k8s.io/client-go/tools/cache.(*Reflector).Run": "k8s.io/client-go/tools/cache",
		"gopkg.in/yaml%2ev3.(*decoder).unmarshal":       "gopkg.in/yaml.v3",
		"net/http.(*conn).serve":                        "net/http",
		"sync.(*WaitGroup).Go.func1":                    "sync",
		"github.com/a/b.F[...]":                         "github.com/a/b",
		// a heap profile's instantiated name (controller-runtime's channel source)
		"sigs.k8s.io/controller-runtime/pkg/source.(*channel[go.shape.interface { GetName() string },sigs.k8s.io/controller-runtime/pkg/reconcile.TypedRequest[k8s.io/apimachinery/pkg/types.NamespacedName]]).Start": "sigs.k8s.io/controller-runtime/pkg/source",
		"github.com/a/lib.Map[github.com/me/app/pkg.T].Get": "github.com/a/lib",
	} {
		if got := PackageOf(fn); got != want {
			t.Errorf("PackageOf(%s) = %s, want %s", fn, got, want)
		}
	}
}
