package analysis

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// runtimeFrame is what teaches the index where GOROOT is.
func runtimeFrames(goroot string) map[int64]Frame {
	return map[int64]Frame{1: {Function: "runtime.gopark", File: goroot + "runtime/proc.go", Line: 460}}
}

func TestCodeIndexFromBuildInfo(t *testing.T) {
	target := bundle.Target{ModulePath: "operator", Deps: []bundle.Module{
		{Path: "k8s.io/client-go", Version: "v0.37.2"},
		{Path: "k8s.io/apimachinery", Version: "v0.37.2"},
		{Path: "gopkg.in/yaml.v3", Version: "v3.0.1"},
		{Path: "github.com/acme/shared", Version: "v0.0.0", Replace: "../shared"},
		{Path: "operator/plugins", Version: "v1.0.0"},
	}}
	c := newCodeIndex(target, nil, runtimeFrames("/usr/local/go/src/"))
	for _, tc := range []struct {
		fn, file string
		want     Owner
		module   string
	}{
		{"main.(*controller).reconcile", "/src/op/main.go", OwnerUser, ""},
		// A module without a dot in its path is still the user's.
		{"operator/pkg/reconcile.(*R).Run", "/src/op/pkg/reconcile/r.go", OwnerUser, ""},
		{"k8s.io/client-go/tools/cache.(*Reflector).ListAndWatch.func1", "/root/go/pkg/mod/k8s.io/client-go@v0.37.2/tools/cache/reflector.go", OwnerDependency, "k8s.io/client-go"},
		{"k8s.io/apimachinery/pkg/util/wait.BackoffUntil", "", OwnerDependency, "k8s.io/apimachinery"},
		{"gopkg.in/yaml%2ev3.Unmarshal", "", OwnerDependency, "gopkg.in/yaml.v3"},
		{"net/http.(*conn).serve", "/usr/local/go/src/net/http/server.go", OwnerStd, ""},
		{"vendor/golang.org/x/net/http2/hpack.(*Decoder).Write", "/usr/local/go/src/vendor/golang.org/x/net/http2/hpack/hpack.go", OwnerStd, ""},
		// Replaced by a local directory: the user's monorepo sibling.
		{"github.com/acme/shared/log.Info", "/src/shared/log/log.go", OwnerUser, ""},
		// A nested module inside the main module's path is its own.
		{"operator/plugins/x.Run", "/root/go/pkg/mod/operator/plugins@v1.0.0/x/x.go", OwnerDependency, "operator/plugins"},
	} {
		got := c.of(tc.fn, tc.file)
		if got.owner != tc.want || got.module != tc.module {
			t.Errorf("%s (%s): %v %q, want %v %q", tc.fn, tc.file, got.owner, got.module, tc.want, tc.module)
		}
	}
}

func TestCodeIndexFromFiles(t *testing.T) {
	toolchain := "/root/go/pkg/mod/golang.org/toolchain@v0.0.1-go1.22.12.linux-amd64/src/"
	for _, tc := range []struct {
		name, goroot, fn, file string
		want                   Owner
		module                 string
	}{
		{"test package without a dot", "/usr/local/go/src/", "kubernetes10182.TestKubernetes10182.func2", "/work/corpus/kubernetes10182/k_test.go", OwnerUser, ""},
		{"module without a dot", "/usr/local/go/src/", "operator/internal/ctl.(*C).sync", "/home/u/operator/internal/ctl/c.go", OwnerUser, ""},
		{"module cache", "/usr/local/go/src/", "k8s.io/client-go/tools/cache.(*sharedProcessor).run", "/root/go/pkg/mod/k8s.io/client-go@v0.37.2/tools/cache/shared_informer.go", OwnerDependency, "k8s.io/client-go"},
		{"module cache case escape", "/usr/local/go/src/", "github.com/Azure/go-autorest/autorest.Send", "/root/go/pkg/mod/github.com/!azure/go-autorest@v14.2.0+incompatible/autorest/sender.go", OwnerDependency, "github.com/Azure/go-autorest"},
		{"trimpath module", "", "k8s.io/client-go/tools/cache.(*Reflector).Run", "k8s.io/client-go@v0.37.2/tools/cache/reflector.go", OwnerDependency, "k8s.io/client-go"},
		{"trimpath std", "", "net/http.(*persistConn).readLoop", "net/http/transport.go", OwnerStd, ""},
		{"trimpath user", "", "github.com/acme/op/ctl.(*C).sync", "github.com/acme/op/ctl/c.go", OwnerUser, ""},
		{"vendor", "/usr/local/go/src/", "k8s.io/client-go/tools/cache.(*Reflector).Run", "/app/vendor/k8s.io/client-go/tools/cache/reflector.go", OwnerDependency, "k8s.io/client-go/tools/cache"},
		{"std under GOROOT", "/usr/local/go/src/", "sync.(*Cond).Wait", "/usr/local/go/src/sync/cond.go", OwnerStd, ""},
		{"toolchain GOROOT learned", toolchain, "net/http.(*conn).serve", toolchain + "net/http/server.go", OwnerStd, ""},
		{"toolchain GOROOT not learned", "", "net/http.(*conn).serve", toolchain + "net/http/server.go", OwnerStd, ""},
		{"no file, std name", "", "context.(*cancelCtx).propagateCancel.func2", "", OwnerStd, ""},
		{"no file, other name", "", "operator.Run", "", OwnerUser, ""},
	} {
		frames := map[int64]Frame{}
		if tc.goroot != "" {
			frames = runtimeFrames(tc.goroot)
		}
		c := newCodeIndex(bundle.Target{}, nil, frames)
		got := c.of(tc.fn, tc.file)
		if got.owner != tc.want || got.module != tc.module {
			t.Errorf("%s: %s (%s): %v %q, want %v %q", tc.name, tc.fn, tc.file, got.owner, got.module, tc.want, tc.module)
		}
	}
}

func TestCodeIndexUserPrefixes(t *testing.T) {
	target := bundle.Target{ModulePath: "github.com/acme/mono/cmd/op", Deps: []bundle.Module{{Path: "github.com/acme/mono/lib", Version: "v1.2.0"}, {Path: "github.com/acmecorp/x", Version: "v1.0.0"}}}
	frames := runtimeFrames("/usr/local/go/src/")
	without := newCodeIndex(target, nil, frames)
	if got := without.of("github.com/acme/mono/lib/queue.(*Q).Get", ""); got.owner != OwnerDependency {
		t.Errorf("without prefixes the monorepo library is a dependency, got %v", got.owner)
	}
	with := newCodeIndex(target, userCodePrefixes([]string{"github.com/acme/", "/srv/checkout/"}), frames)
	for fn, want := range map[string]Owner{
		"github.com/acme/mono/lib/queue.(*Q).Get": OwnerUser,
		"github.com/acmecorp/x.F":                 OwnerDependency, // a prefix is a path prefix, not a string prefix
		"github.com/acme/mono/cmd/op/ctl.Run":     OwnerUser,
	} {
		if got := with.of(fn, ""); got.owner != want {
			t.Errorf("%s: %v, want %v", fn, got.owner, want)
		}
	}
	if got := with.of("vendored.Thing", "/srv/checkout/third_party/vendored/t.go"); got.owner != OwnerUser {
		t.Errorf("file prefix: %v", got.owner)
	}
	t.Setenv(UserCodeEnv, "github.com/acme/mono/lib")
	env := newCodeIndex(target, userCodePrefixes(nil), frames)
	if got := env.of("github.com/acme/mono/lib/queue.(*Q).Get", ""); got.owner != OwnerUser {
		t.Errorf("$%s: %v", UserCodeEnv, got.owner)
	}
}

// TestStdRoots checks the fallback list of standard library roots against
// the installed toolchain.
func TestStdRoots(t *testing.T) {
	out, err := exec.Command("go", "list", "std").Output()
	if err != nil {
		t.Skipf("go list std: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if !stdRoot(p) {
			t.Errorf("standard package %s has a root missing from stdRoots", p)
		}
	}
	if stdRoot("operator") || stdRoot("kubernetes10182") || stdRoot("k8s.io/client-go") {
		t.Error("non-standard paths taken for standard")
	}
}

// TestSampleBundleFramesClassified checks loadStacks classifies every
// frame of a committed capture: the sample's own code is the user's, the
// runtime and net/http are the standard library's.
func TestSampleBundleFramesClassified(t *testing.T) {
	b, err := bundle.Open("../cmd/leakscope/bundles/operator-sim.lsb")
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	st, err := loadStacks(b, mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	var user, std int
	for _, f := range st.frames {
		switch {
		case strings.HasPrefix(f.Function, "main."):
			user++
			if f.owner != OwnerUser {
				t.Errorf("%s: %v", f.Function, f.owner)
			}
		case strings.HasPrefix(f.Function, "runtime.") || strings.HasPrefix(f.Function, "net/http."):
			std++
			if f.owner != OwnerStd {
				t.Errorf("%s (%s): %v", f.Function, f.File, f.owner)
			}
		case f.owner == OwnerUnknown:
			t.Errorf("%s: not classified", f.Function)
		}
	}
	if user == 0 || std == 0 {
		t.Fatalf("bundle has %d user and %d std frames", user, std)
	}
}
