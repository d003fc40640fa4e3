package flame

import (
	"fmt"
	"strings"
)

// FormatValue renders v in its unit for people: bytes in B/KiB/MiB/GiB,
// nanoseconds in ns/µs/ms/s, counts as plain integers.
func FormatValue(v int64, unit string) string {
	sign := ""
	a := v
	if v < 0 {
		sign, a = "-", -v
	}
	f := float64(a)
	switch unit {
	case "bytes":
		switch {
		case a >= 1<<30:
			return fmt.Sprintf("%s%.1f GiB", sign, f/(1<<30))
		case a >= 1<<20:
			return fmt.Sprintf("%s%.1f MiB", sign, f/(1<<20))
		case a >= 1<<10:
			return fmt.Sprintf("%s%.1f KiB", sign, f/(1<<10))
		}
		return fmt.Sprintf("%s%d B", sign, a)
	case "nanoseconds":
		switch {
		case a >= 1e9:
			return fmt.Sprintf("%s%.2f s", sign, f/1e9)
		case a >= 1e6:
			return fmt.Sprintf("%s%.2f ms", sign, f/1e6)
		case a >= 1e3:
			return fmt.Sprintf("%s%.2f µs", sign, f/1e3)
		}
		return fmt.Sprintf("%s%d ns", sign, a)
	}
	return fmt.Sprint(v)
}

// PackageOf returns the import path of the package of a Go function name:
// "github.com/a/b.(*T).M" gives "github.com/a/b", "runtime.gopark" gives
// "runtime", "gopkg.in/yaml%2ev3.Unmarshal" gives "gopkg.in/yaml.v3"; the
// slashes inside type arguments ("lib.Map[github.com/me/app.T].Get") are
// not the function's. A name without a package gives itself.
func PackageOf(function string) string {
	fn := WithoutTypeArgs(function)
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot < 0 {
		return fn
	}
	return strings.ReplaceAll(fn[:slash+1+dot], "%2e", ".")
}

// WithoutTypeArgs writes the type arguments of an instantiated generic
// function name as "[...]", as goroutine dumps do: profiles and traces
// spell them out ("pkg.(*T[go.shape.struct { F other/pkg.X }]).M").
func WithoutTypeArgs(fn string) string {
	if strings.IndexByte(fn, '[') < 0 {
		return fn
	}
	var b strings.Builder
	depth := 0
	for _, r := range fn {
		switch {
		case r == '[':
			if depth == 0 {
				b.WriteString("[...")
			}
			depth++
		case r == ']' && depth > 0:
			depth--
			if depth == 0 {
				b.WriteByte(']')
			}
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}
