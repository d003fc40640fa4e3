package main

import (
	"context"
	"crypto/sha256"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// treeDigest hashes every file under dir with its path and mode, so that
// any change to the tree shows.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		io.WriteString(h, rel+"\x00"+info.Mode().String()+"\x00")
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(h.Sum(nil))
}

// copyTree copies the directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// TestCaptureRefusesExisting checks that capture -o onto an existing
// bundle (or an archive's directory) exits 1 and changes nothing.
func TestCaptureRefusesExisting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "old.lsb")
	copyTree(t, "bundles/timeout-send.lsb", dir)
	before := treeDigest(t, dir)
	for _, out := range []string{dir, strings.TrimSuffix(dir, ".lsb") + ".tar.zst"} {
		err := run(context.Background(), []string{"capture", "--url", "http://127.0.0.1:1", "--duration", "1s", "--interval", "1s", "-o", out}, io.Discard, io.Discard)
		if err == nil || exitCode(err, io.Discard) != 1 || !strings.Contains(err.Error(), "exists") {
			t.Errorf("capture -o %s onto an existing bundle: err %v, want exit 1 naming it", out, err)
		}
		if after := treeDigest(t, dir); after != before {
			t.Fatalf("capture -o %s changed the existing bundle", out)
		}
	}
}

// TestNotBundleMessages checks that every command names a non-bundle
// argument the same way and says what to give instead.
func TestNotBundleMessages(t *testing.T) {
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty")
	os.Mkdir(empty, 0o755)
	archive := filepath.Join(tmp, "b.tar.zst")
	if err := run(context.Background(), []string{"pack", "bundles/timeout-send.lsb", "-o", archive}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(tmp, "cut.tar.zst")
	if err := os.WriteFile(cut, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(tmp, "notes.txt")
	os.WriteFile(text, []byte("hello\n"), 0o644)
	missing := filepath.Join(tmp, "missing.lsb")
	for _, args := range [][]string{
		{"report", missing}, {"inspect", missing}, {"pack", missing},
		{"report", empty}, {"inspect", empty}, {"pack", empty}, {"upload", empty, "--to", "http://127.0.0.1:1"},
		{"report", cut}, {"inspect", cut}, {"report", text},
	} {
		err := run(context.Background(), args, io.Discard, io.Discard)
		if err == nil || exitCode(err, io.Discard) != 1 {
			t.Errorf("%q: err %v, want exit 1", args, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, args[1]+" is not a leakscope bundle (") || !strings.Contains(msg, "give a bundle directory (NAME.lsb") {
			t.Errorf("%q: %q does not read as the one not-a-bundle message", args, msg)
		}
	}
}
