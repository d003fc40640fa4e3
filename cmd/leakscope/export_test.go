package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakscope/leakscope/dev/bundletest"
	"github.com/leakscope/leakscope/ingest/schema"
)

// TestExportGoesOnPastABadBundle: a bundle that cannot be exported (its
// analysis fails, here on a damaged table) is named, and the others are
// exported all the same.
func TestExportGoesOnPastABadBundle(t *testing.T) {
	tmp := t.TempDir()
	bad := bundletest.Small(t, tmp, "bad")
	bundletest.Corrupt(t, bad, schema.TableGoroutines, bundletest.Damages[0])
	good := bundletest.Small(t, tmp, "good")
	out := filepath.Join(tmp, "out")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"export", bad, good, "-o", out}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "1 of 2 bundles not exported") {
		t.Fatalf("export: %v", err)
	}
	if !strings.Contains(stderr.String(), bad+": ") || !strings.Contains(stdout.String(), good+" -> ") {
		t.Errorf("stdout %q, stderr %q: want the good bundle exported and the bad one named", stdout.String(), stderr.String())
	}
}
