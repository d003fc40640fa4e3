package flame

import (
	"strings"

	"github.com/leakscope/leakscope/internal/format"
	"github.com/leakscope/leakscope/internal/gosym"
)

// FormatValue renders v in its unit for people: bytes in B/KiB/MiB/GiB,
// nanoseconds in ns/µs/ms/s, counts with thousands separators
// ([format.Value]).
func FormatValue(v int64, unit string) string { return format.Value(v, unit) }

// PackageOf returns the import path of the package of a Go function name:
// "github.com/a/b.(*T).M" gives "github.com/a/b", "runtime.gopark" gives
// "runtime", "gopkg.in/yaml%2ev3.Unmarshal" gives "gopkg.in/yaml.v3"; the
// slashes inside type arguments ("lib.Map[github.com/me/app.T].Get") are
// not the function's. A name without a package gives itself.
func PackageOf(function string) string {
	fn := gosym.ElideTypeArgs(function)
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot < 0 {
		return fn
	}
	return strings.ReplaceAll(fn[:slash+1+dot], "%2e", ".")
}

// ShortName drops the import path before the package name
// ("k8s.io/client-go/informers.(*sharedInformerFactory).Start" gives
// "informers.(*sharedInformerFactory).Start") and writes type arguments
// as "[...]". Only a slash of the import path counts: one after the first
// character no import path holds ("main.evil</script>" is package main's,
// and stays whole).
func ShortName(function string) string {
	fn := gosym.ElideTypeArgs(function)
	end := strings.IndexFunc(fn, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~/+%!", r))
	})
	if end < 0 {
		end = len(fn)
	}
	if i := strings.LastIndexByte(fn[:end], '/'); i >= 0 {
		return fn[i+1:]
	}
	return fn
}
