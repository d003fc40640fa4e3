package bundle_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/dev/bundletest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// TestHostileLengths damages a real bundle's table so that it claims a
// 1 TiB buffer, a 1 TiB body or 2 GiB of metadata, and checks that reading
// and validating refuse it with a CorruptError naming the file, keep the
// batches before it, and never allocate anywhere near what it claims.
func TestHostileLengths(t *testing.T) {
	for _, d := range bundletest.Damages {
		t.Run(string(d), func(t *testing.T) {
			dir := bundletest.Small(t, t.TempDir(), "hostile")
			bundletest.Corrupt(t, dir, schema.TableGoroutines, d)
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			b, err := bundle.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			var rows int64
			err = b.ReadTable(schema.TableGoroutines, mem, func(rec arrow.Record) error {
				rows += rec.NumRows()
				return nil
			})
			var ce *bundle.CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("ReadTable: %v, want a CorruptError", err)
			}
			if !strings.Contains(err.Error(), "goroutines.arrow") || ce.ValidBatches != 1 || rows != 200 {
				t.Errorf("error %q after %d rows (%d good batches), want the file named and the first batch of 200 rows kept", err, rows, ce.ValidBatches)
			}
			mem.AssertSize(t, 0)
			if _, err := bundle.Validate(dir); err == nil || !errors.As(err, &ce) {
				t.Errorf("Validate: %v, want a CorruptError", err)
			}
			if _, err := b.Tables(mem); err == nil {
				t.Errorf("Tables accepted the damaged table")
			}
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("reading the damaged table allocated %d bytes", grew)
			}
		})
	}
}

// TestBudget checks that a table whose batches are larger than the memory
// budget is refused, and read again once the budget allows it.
func TestBudget(t *testing.T) {
	dir := bundletest.Small(t, t.TempDir(), "budget")
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	old := bundle.MaxBatchBytes
	defer func() { bundle.MaxBatchBytes = old }()
	bundle.MaxBatchBytes = 1024
	err = b.ReadTable(schema.TableGoroutines, memory.DefaultAllocator, func(arrow.Record) error { return nil })
	var ce *bundle.CorruptError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "1024 bytes") {
		t.Fatalf("over budget: %v", err)
	}
	bundle.MaxBatchBytes = old
	if err := b.ReadTable(schema.TableGoroutines, memory.DefaultAllocator, func(arrow.Record) error { return nil }); err != nil {
		t.Fatal(err)
	}
}

// TestUnlistedRaw leaves a raw file the manifest does not list, as a
// capture killed while downloading it does: it is no original, so
// RawFiles does not offer it and Pack does not ship it.
func TestUnlistedRaw(t *testing.T) {
	dir := bundletest.Small(t, t.TempDir(), "orphan")
	if err := os.WriteFile(filepath.Join(dir, bundle.RawDir, "heap-half.pb.gz"), []byte("\x1f\x8b half"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := b.RawFiles()
	if len(raw) != 1 || raw[0] != "goroutines.txt" {
		t.Errorf("RawFiles = %v, want only the listed goroutines.txt", raw)
	}
	var buf bytes.Buffer
	if err := bundle.Pack(dir, &buf, bundle.FormatTarGzip); err != nil {
		t.Fatal(err)
	}
	zr, _ := gzip.NewReader(&buf)
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		if strings.Contains(h.Name, "heap-half") {
			t.Errorf("Pack shipped the unlisted %s", h.Name)
		}
	}
}
