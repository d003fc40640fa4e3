package probe

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestInlineExpansion runs testdata/inliner, which prints its stack taken
// below an inlined call and the runtime's own expansion of it, and
// checks that the symbolizer expands the same PCs into the same frames
// (with DWARF), or at least the same outer functions (stripped).
func TestInlineExpansion(t *testing.T) {
	for _, flavour := range []string{"", "stripped"} {
		exe := filepath.Join(t.TempDir(), "inliner")
		args := []string{"build", "-o", exe}
		if flavour == "stripped" {
			args = append(args, "-ldflags=-s -w")
		}
		if out, err := exec.Command("go", append(args, "./testdata/inliner")...).CombinedOutput(); err != nil {
			t.Fatalf("build inliner: %v\n%s", err, out)
		}
		out, err := exec.Command(exe).Output()
		if err != nil {
			t.Fatal(err)
		}
		var pcs []uint64
		var want []string
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			switch f := strings.Fields(sc.Text()); f[0] {
			case "pc":
				pc, err := strconv.ParseUint(f[1], 0, 64)
				if err != nil {
					t.Fatal(err)
				}
				pcs = append(pcs, pc)
			case "frame":
				want = append(want, f[1]+" "+filepath.Base(f[2]))
			}
		}
		b, err := OpenBinary(exe)
		if err != nil {
			t.Fatal(err)
		}
		s := NewSymbolizer(b, 0)
		var got []string
		for _, pc := range pcs {
			for _, f := range s.FramesAt(pc, true) {
				fr := fmt.Sprintf("%s %s:%d", f.Function, filepath.Base(f.File), f.Line)
				// The runtime adds a PC per inlined call that maps to the
				// same frames; drop the repeat.
				if len(got) == 0 || got[len(got)-1] != fr {
					got = append(got, fr)
				}
			}
		}
		b.Close()
		t.Logf("%s: runtime %q", flavour, want)
		t.Logf("%s: probe   %q", flavour, got)
		if flavour == "" {
			if !slices.Equal(got, want) {
				t.Errorf("frames differ:\nruntime %q\nprobe   %q", want, got)
			}
			if f := s.FramesAt(pcs[1], true); len(f) != 2 || f[0].Function != "main.inner" || !f[0].Inlined || f[1].Function != "main.outer" || f[1].Inlined {
				t.Errorf("first pc: %+v, want main.inner inlined in main.outer", f)
			}
			continue
		}
		// Without DWARF: one frame per PC, the outer function.
		if f := s.FramesAt(pcs[1], true); len(f) != 1 || f[0].Function != "main.outer" {
			t.Errorf("stripped first pc: %+v, want main.outer only", f)
		}
	}
}
