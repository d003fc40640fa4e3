package probe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// verified are the go1.26.8 offsets recorded in docs/EBPF.md.
var verified = Offsets{GGoid: 152, GParentGoid: 280, GGopc: 288, GStartPC: 304, GM: 48, MCurg: 184}

func openSpawner(t *testing.T, flavour string) *Binary {
	t.Helper()
	b, err := OpenBinary(buildSpawner(t, flavour))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestOffsetsDWARF(t *testing.T) {
	b := openSpawner(t, "")
	if b.GoVersion() != runtime.Version() || b.Module() == "" {
		t.Errorf("build info: version %q module %q, want %q and a module", b.GoVersion(), b.Module(), runtime.Version())
	}
	got := b.Offsets()
	if got.Source != "dwarf" || b.Stripped() {
		t.Fatalf("source %q stripped %v, want dwarf and not stripped", got.Source, b.Stripped())
	}
	if !strings.HasPrefix(runtime.Version(), "go1.26.") {
		t.Skipf("EBPF.md's offsets were verified on go1.26.8, this is %s", runtime.Version())
	}
	got.Source = ""
	if got != verified {
		t.Errorf("DWARF offsets %+v, want %+v", got, verified)
	}
	if tab := offsetTable["go1.26"]; tab != verified {
		t.Errorf("go1.26 table %+v differs from DWARF %+v", tab, verified)
	}
}

func TestProbeLocations(t *testing.T) {
	full, stripped := openSpawner(t, ""), openSpawner(t, "stripped")
	if !stripped.Stripped() {
		t.Fatal("-s -w binary reports a .symtab")
	}
	if src := stripped.Offsets().Source; src != "table:"+goLang() {
		t.Errorf("stripped offsets source %q, want table:%s", src, goLang())
	}
	if !slices.ContainsFunc(stripped.Notes(), func(n string) bool { return strings.Contains(n, "no DWARF") }) {
		t.Errorf("stripped notes %q do not say DWARF is missing", stripped.Notes())
	}
	for _, name := range []string{"runtime.newproc1", "runtime.gdestroy", "runtime.profilealloc",
		"runtime.(*gcControllerState).startCycle", "runtime.gcMarkTermination"} {
		f1, err := full.Func(name)
		if err != nil {
			t.Fatal(err)
		}
		f2, err := stripped.Func(name)
		if err != nil {
			t.Fatal(err)
		}
		if f1.Source != "symtab" || f2.Source != "pclntab" {
			t.Errorf("%s: sources %q %q, want symtab and pclntab", name, f1.Source, f2.Source)
		}
		// -s -w drops sections after the text: the code is laid out the
		// same. The pclntab size runs to the next function (padding).
		if f1.Addr != f2.Addr || f1.Size > f2.Size || f2.Size-f1.Size >= 64 || f1.FileOffset != f2.FileOffset {
			t.Errorf("%s: symtab %+v, pclntab %+v", name, f1, f2)
		}
		if name == "runtime.newproc1" {
			r1, err1 := full.RetOffsets(f1)
			r2, err2 := stripped.RetOffsets(f2)
			if err1 != nil || err2 != nil || len(r1) == 0 || !slices.Equal(r1, r2) {
				t.Errorf("newproc1 RETs %#x (%v) vs %#x (%v)", r1, err1, r2, err2)
			}
			t.Logf("newproc1 RETs at %#x", r1)
			continue
		}
		off, ok, err := stripped.PrologueEnd(f2)
		if err != nil || !ok || off < 6 || off > 0x20 {
			t.Errorf("%s: post-prologue offset %#x ok=%v err=%v", name, off, ok, err)
		}
		code, _ := stripped.code(f2)
		// The probe point must be the instruction after a JBE (0x76 rel8
		// or 0x0f 0x86 rel32).
		if off >= 2 && code[off-2] != 0x76 && (off < 6 || code[off-6] != 0x0f || code[off-5] != 0x86) {
			t.Errorf("%s: byte before +%#x is not a JBE: % x", name, off, code[:off])
		}
	}
	if _, err := full.Func("runtime.noSuchFunction"); !errors.Is(err, errNoFunc) {
		t.Errorf("missing function: err %v", err)
	}
}

func goLang() string {
	v := runtime.Version()
	if i := strings.Index(v[len("go1."):], "."); i >= 0 {
		return v[:len("go1.")+i]
	}
	return v
}

func TestSymbolizer(t *testing.T) {
	for _, flavour := range []string{"", "stripped"} {
		b := openSpawner(t, flavour)
		s := NewSymbolizer(b, 0)
		// The pclntab size of a function runs up to the next one's entry.
		fn, err := openSpawner(t, "stripped").Func("main.parked")
		if err != nil {
			t.Fatal(err)
		}
		f, ok := s.Frame(fn.Addr, false)
		if !ok || f.Function != "main.parked" || filepath.Base(filepath.Dir(f.File)) != "spawner" || f.Line <= 0 {
			t.Errorf("%s: frame of main.parked entry = %+v, %v", flavour, f, ok)
		}
		// The next function's entry is in that function, but as a return
		// address it belongs to the call just before it.
		next := fn.Addr + fn.Size
		if f, _ := s.Frame(next, false); f.Function == "main.parked" {
			t.Errorf("%s: exact pc %#x symbolised into main.parked", flavour, next)
		}
		frames := s.Frames([]uint64{fn.Addr, next, 1})
		if frames[0].Function != "main.parked" || frames[1].Function != "main.parked" || frames[2].Function != "?" {
			t.Errorf("%s: frames %+v", flavour, frames)
		}
	}
}

func TestOpenBinaryErrors(t *testing.T) {
	dir := t.TempDir()
	cases := map[string][]byte{
		"empty":   nil,
		"garbage": []byte("not an elf file at all"),
		"elfhead": []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
	}
	exe, err := os.ReadFile(buildSpawner(t, "stripped"))
	if err != nil {
		t.Fatal(err)
	}
	cases["truncated"] = exe[:len(exe)/2]
	for name, data := range cases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := OpenBinary(p)
		if b != nil || err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: got %v, %v; want an error naming the file", name, b, err)
		}
	}
}

// TestCorruptPclntab overwrites parts of a real binary's function table:
// opening and symbolising must fail cleanly or succeed, never panic.
func TestCorruptPclntab(t *testing.T) {
	path := buildSpawner(t, "stripped")
	b, err := OpenBinary(path)
	if err != nil {
		t.Fatal(err)
	}
	sec := b.elf.Section(".gopclntab")
	fn, _ := b.Func("main.parked")
	b.Close()
	exe, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Each case overwrites n bytes at offset at of the section; the 8 at +8
	// are the function count alone.
	for i, c := range []struct{ at, n uint64 }{{0, 256}, {8, 8}, {8, 256}, {64, 256}, {sec.Size / 3, 256}, {sec.Size / 2, 256}} {
		at := c.at
		bad := slices.Clone(exe)
		for j := sec.Offset + at; j < sec.Offset+at+c.n && j < uint64(len(bad)); j++ {
			bad[j] = 0xff
		}
		p := filepath.Join(dir, fmt.Sprintf("bad%d", i))
		if err := os.WriteFile(p, bad, 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := OpenBinary(p)
		if err != nil {
			t.Logf("corruption at +%#x: %v", at, err)
			continue
		}
		NewSymbolizer(b, 0).Frames([]uint64{fn.Addr, fn.Addr + 5, 0x401000})
		b.Close()
	}
}

func FuzzOpenBinary(f *testing.F) {
	f.Add([]byte("\x7fELF\x02\x01\x01\x00"))
	f.Add([]byte{})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "bin")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := OpenBinary(p)
		if (b == nil) == (err == nil) {
			t.Fatalf("binary %v with error %v", b, err)
		}
		if b != nil {
			b.Close()
		}
	})
}
