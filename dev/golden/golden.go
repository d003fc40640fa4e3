// Package golden compares test output with a committed golden file under
// testdata/, and rewrites the file when the test runs with -update.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Check compares got with testdata/NAME. With -update it writes got there
// first (creating testdata/), so the comparison then holds.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output at line %d (run go test -update and review the diff):\n got: %q\nwant: %q",
			path, firstDiff(got, want)+1, line(got, firstDiff(got, want)), line(want, firstDiff(got, want)))
	}
}

// firstDiff returns the index of the first line where a and b differ.
func firstDiff(a, b []byte) int {
	al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range al {
		if i >= len(bl) || !bytes.Equal(al[i], bl[i]) {
			return i
		}
	}
	return len(al)
}

// line returns line i of s, or "" past its end.
func line(s []byte, i int) string {
	l := bytes.Split(s, []byte("\n"))
	if i < len(l) {
		return string(l[i])
	}
	return ""
}
