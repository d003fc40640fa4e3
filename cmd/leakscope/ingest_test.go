package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIngestMessages checks what ingest says when files fail: no empty
// bundle is left when none could be read, the summary says what the
// bundle holds, and a file given twice is noted, not counted as failed.
func TestIngestMessages(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.bin")
	os.WriteFile(junk, []byte("\x00\x01\x02 not a profile"), 0o644)
	dump := filepath.Join(dir, "dump.txt")
	os.WriteFile(dump, []byte("goroutine 1 [running]:\nmain.main()\n\t/x/main.go:5 +0x25\n"), 0o644)
	out := filepath.Join(dir, "b.lsb")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"ingest", junk, "-o", out}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "no bundle was written") {
		t.Errorf("all files bad: %v", err)
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Errorf("an empty bundle was left behind")
	}
	err = run(context.Background(), []string{"ingest", dump, junk, dump, "-o", out}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "1 of 3 files not ingested; the bundle "+out+" holds the other 2") {
		t.Errorf("one bad file: %v", err)
	}
	if !strings.Contains(stderr.String(), "note: ") || !strings.Contains(stderr.String(), "already in the bundle as raw/dump.txt") {
		t.Errorf("the repeated file was not noted:\n%s", stderr.String())
	}
}
