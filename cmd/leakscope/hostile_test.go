package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/leakscope/leakscope/dev/bundletest"
	"github.com/leakscope/leakscope/ingest/schema"
)

// TestHostileBundle runs inspect and report on a small bundle whose table
// claims a 1 TiB buffer (and the other damages bundletest makes): each must
// fail with an error naming the damaged file, not run out of memory.
func TestHostileBundle(t *testing.T) {
	for _, d := range bundletest.Damages {
		t.Run(string(d), func(t *testing.T) {
			dir := bundletest.Small(t, t.TempDir(), "hostile")
			bundletest.Corrupt(t, dir, schema.TableGoroutines, d)
			for _, args := range [][]string{{"inspect", dir}, {"report", dir}, {"report", dir, "--format", "html"}} {
				var out, errb bytes.Buffer
				err := run(context.Background(), args, &out, &errb)
				if err == nil || !strings.Contains(err.Error(), "goroutines.arrow") || !strings.Contains(err.Error(), "corrupt table") {
					t.Errorf("%v: %v, want an error naming goroutines.arrow as corrupt", args, err)
				}
			}
		})
	}
}
