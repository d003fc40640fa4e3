//go:build linux

package probe

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/leakscope/leakscope/dev/versions"
)

// buildTarget builds the version matrix's target with toolchain in mode,
// as the matrix does (so the two tests share the cached binaries).
func buildTarget(t *testing.T, toolchain string, mode versions.Mode) string {
	t.Helper()
	dir, err := versions.TargetDir()
	if err != nil {
		t.Fatal(err)
	}
	exp, _ := versions.LeakProfileExperiment(toolchain)
	exe, err := versions.Build(t.Context(), versions.Spec{Dir: dir, Toolchain: toolchain, Mode: mode, Experiment: exp})
	if err != nil {
		t.Fatalf("%v (make deps fetches the toolchains)", err)
	}
	return exe
}

// TestOffsetTables checks every built-in offset table entry against the
// DWARF of binaries built by that release (plain and PIE), and that every
// probe finds its place in plain, stripped and PIE binaries of every tested
// release.
func TestOffsetTables(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program with every tested Go release")
	}
	langs := map[string]bool{}
	for _, tc := range versions.Toolchains {
		lang := versions.Lang(tc)
		langs[lang] = true
		t.Run(tc, func(t *testing.T) {
			bins := map[versions.Mode]*Binary{}
			for _, m := range versions.Modes {
				bins[m] = openTarget(t, tc, m)
			}
			for m, b := range bins {
				off := b.Offsets()
				want := "dwarf"
				if m == versions.Stripped {
					want = "table:" + lang
				}
				if off.Source != want || !versions.BuiltBy(b.GoVersion(), tc) || !Tested(b.GoVersion()) {
					t.Errorf("%s: %s binary, offsets from %q, want %s", m, b.GoVersion(), off.Source, want)
				}
				off.Source = ""
				if offsetTable[lang] != off {
					t.Errorf("%s: offsets %+v, built-in %s table %+v", m, off, lang, offsetTable[lang])
				}
				for _, n := range b.Notes() {
					if strings.Contains(n, "warning") || strings.Contains(n, "unchecked") {
						t.Errorf("%s: tested release noted %q", m, n)
					}
				}
				checkProbeSites(t, m, b)
			}
			sameFunctions(t, bins[versions.Plain], bins[versions.Stripped])
		})
	}
	for lang := range offsetTable {
		if !langs[lang] {
			t.Errorf("offset table entry %s is checked by no toolchain of the matrix", lang)
		}
	}
}

// checkProbeSites locates every probe of the full probe set in b: a return
// site for newproc1, a post-prologue point for the entry probes.
func checkProbeSites(t *testing.T, m versions.Mode, b *Binary) {
	t.Helper()
	ps := probeSet(Options{}.withDefaults())
	if len(ps) != 5 {
		t.Fatalf("probe set %+v, want five probes", ps)
	}
	for _, p := range ps {
		f, err := b.Func(p.symbol)
		if err != nil {
			t.Errorf("%s: %v", m, err)
			continue
		}
		if p.ret {
			sites, err := b.retSites(f)
			if err != nil || len(sites) == 0 {
				t.Errorf("%s: %s return sites %v, %v", m, p.symbol, sites, err)
			}
			if m == versions.Stripped {
				inFrame := slices.ContainsFunc(sites, func(s retSite) bool { return s.Offset != s.Ret })
				t.Logf("%s: return sites %#x (in-frame branch found: %v)", p.symbol, sites, inFrame)
			}
			continue
		}
		if off, ok, err := b.PrologueEnd(f); err != nil || !ok || off < 6 || off > 0x20 {
			t.Errorf("%s: %s post-prologue offset %#x ok=%v err=%v", m, p.symbol, off, ok, err)
		}
	}
}

// sameFunctions checks that the pclntab of a stripped binary locates the
// probed functions where the symbol table of the plain one does.
func sameFunctions(t *testing.T, plain, stripped *Binary) {
	t.Helper()
	for _, p := range probeSet(Options{}.withDefaults()) {
		f1, err1 := plain.Func(p.symbol)
		f2, err2 := stripped.Func(p.symbol)
		if err1 != nil || err2 != nil || f1.Addr != f2.Addr || f1.Source != "symtab" || f2.Source != "pclntab" {
			t.Errorf("%s: symtab %+v (%v), pclntab %+v (%v)", p.symbol, f1, err1, f2, err2)
		}
	}
}

// TestUntestedRelease checks a release outside the tested range: probed
// from its DWARF with a warning, refused when stripped.
func TestUntestedRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program with an old Go release")
	}
	tc := versions.Untested
	if Tested(tc) {
		t.Fatalf("%s counts as tested", tc)
	}
	plain := openTarget(t, tc, versions.Plain)
	if src := plain.Offsets().Source; src != "dwarf" {
		t.Errorf("offsets from %q, want dwarf", src)
	}
	if !slices.ContainsFunc(plain.Notes(), func(n string) bool {
		return strings.HasPrefix(n, "warning: built with "+tc+", outside") && strings.Contains(n, MinGoVersion)
	}) {
		t.Errorf("notes %q do not warn about the untested release", plain.Notes())
	}
	stripped := buildTarget(t, tc, versions.Stripped)
	b, err := OpenBinary(stripped)
	if err == nil {
		b.Close()
		t.Fatalf("stripped %s binary opened with offsets %+v", tc, b.Offsets())
	}
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), tc) || !strings.Contains(err.Error(), "rebuild it keeping DWARF") {
		t.Errorf("stripped %s: %v, want ErrNotSupported naming the release and the way out", tc, err)
	}
}

func openTarget(t *testing.T, toolchain string, mode versions.Mode) *Binary {
	t.Helper()
	b, err := OpenBinary(buildTarget(t, toolchain, mode))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}
