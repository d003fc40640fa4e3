package bundle

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDirSize(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "raw", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]int{"manifest.json": 10, "raw/a": 300, "raw/deep/b": 4096} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "raw/deep/b"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if got := DirSize(dir); got != 10+300+4096 {
		t.Fatalf("DirSize = %d, want %d (symlinks not followed)", got, 10+300+4096)
	}
	if got := DirSize(filepath.Join(dir, "missing")); got != 0 {
		t.Fatalf("DirSize of a missing dir = %d", got)
	}
}
