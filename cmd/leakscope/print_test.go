package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNamesCannotDriveTheTerminal: a file, function and goroutine label
// named with an escape sequence (one that retitles the window) and
// invalid UTF-8 reach the terminal escaped, from ingest, inspect, a
// failed ingest's error and report's Markdown.
func TestNamesCannotDriveTheTerminal(t *testing.T) {
	const evil = "\x1b]0;pwned\x07\xff"
	dir := t.TempDir()
	dump := filepath.Join(dir, "dump"+evil+".txt")
	body := "goroutine 1 [chan receive, 5 minutes]:\nmain.wait" + evil + "()\n\t/x/main" + evil + ".go:5 +0x25\ncreated by main.main in goroutine 1\n\t/x/main.go:9 +0x25\n"
	if err := os.WriteFile(dump, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk"+evil+".bin")
	os.WriteFile(junk, []byte("\x00\x01 not a profile"), 0o644)
	out := filepath.Join(dir, "b.lsb")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"ingest", dump, junk, "-o", out}, &stdout, &stderr)
	exitCode(err, &stderr)
	for _, args := range [][]string{{"inspect", out}, {"report", out}} {
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	all := stdout.String() + stderr.String()
	if strings.ContainsAny(all, "\x1b\x07") || strings.Contains(all, "\xff") {
		t.Errorf("an escape sequence or invalid UTF-8 reached the terminal:\n%q", all)
	}
	if !strings.Contains(all, `dump\x1b]0;pwned\x07\xff.txt`) {
		t.Errorf("the file's name is not shown escaped:\n%s", all)
	}
}
