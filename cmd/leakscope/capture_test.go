package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestCaptureUploadUsage checks that bad capture and upload command lines
// are usage errors (exit status 2) naming what is wrong.
func TestCaptureUploadUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"capture", "-o", "x.lsb"}, "need --pid or --url"},
		{[]string{"capture", "--url", "http://127.0.0.1:1"}, "need -o BUNDLE"},
		{[]string{"capture", "--url", "http://127.0.0.1:1", "-o", "x", "--trace-window", "1500ms"}, "whole number of seconds"},
		{[]string{"capture", "--url", "http://127.0.0.1:1", "-o", "x", "--interval", "2s", "--cpu-window", "3s"}, "longer than the interval"},
		{[]string{"capture", "--url", "http://127.0.0.1:1", "-o", "x", "extra"}, "unexpected argument"},
		{[]string{"capture", "--url", "http://127.0.0.1:1", "-o", "x", "--ebpf-budget", "0"}, "must be above 0"},
		{[]string{"upload", "--to", "http://127.0.0.1:1"}, "need exactly one BUNDLE"},
		{[]string{"upload", "b.lsb"}, "need --to URL"},
	} {
		err := run(context.Background(), tc.args, io.Discard, io.Discard)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want a usage error about %q", tc.args, err, tc.want)
		}
		if code := exitCode(err, io.Discard); code != 2 {
			t.Errorf("%q: exit status %d, want 2", tc.args, code)
		}
	}
	err := run(context.Background(), []string{"upload", t.TempDir(), "--to", "http://127.0.0.1:1"}, io.Discard, io.Discard)
	if err == nil || exitCode(err, io.Discard) != 1 || !strings.Contains(err.Error(), "without manifest.json") {
		t.Errorf("upload of a non-bundle: err %v", err)
	}
}
