package export

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/leakscope/leakscope/ingest/killpoint"
)

// WorkDir is the directory under an export directory that holds the
// exporter's temporaries: DIR/.leakscope-export/tmp/X/c/TABLE.parquet.part
// while a capture is written, DIR/.leakscope-export/old/… for an export
// being replaced where the kernel cannot swap two directories. It is four
// levels below DIR and its files end .part, so no glob over the hive
// layout (DIR/*/*/TABLE.parquet, DIR/**/*.parquet) reaches a partial file.
const WorkDir = ".leakscope-export"

// partSuffix marks a Parquet file still being written.
const partSuffix = ".part"

// noExchange makes install replace an earlier export by two renames even
// where the kernel can swap directories (a test sets it, to kill the
// fallback at each step).
var noExchange bool

// begin prepares dir for an export: it takes the directory's export lock
// (one exporter at a time per directory), removes the temporaries of
// exports that died (kill -9), puts back an earlier export that was moved
// aside and not replaced, and returns a new temporary capture directory
// and the release of the lock.
func begin(dir string) (tmp string, release func(), err error) {
	work := filepath.Join(dir, WorkDir)
	for _, d := range []string{filepath.Join(work, "tmp"), filepath.Join(work, "old")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", nil, fmt.Errorf("export: %w", err)
		}
	}
	release, err = lockDir(filepath.Join(work, "lock"))
	if err != nil {
		return "", nil, fmt.Errorf("export: lock %s: %w", dir, err)
	}
	if err := recoverDir(dir); err != nil {
		release()
		return "", nil, err
	}
	x, err := os.MkdirTemp(filepath.Join(work, "tmp"), "x-")
	if err != nil {
		release()
		return "", nil, fmt.Errorf("export: %w", err)
	}
	tmp = filepath.Join(x, "c")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		release()
		return "", nil, fmt.Errorf("export: %w", err)
	}
	return tmp, release, nil
}

// recoverDir undoes what a killed export left: every temporary is
// removed, and an earlier export moved aside (old/NAME, NAME the
// path-escaped capture directory) goes back in place unless its
// replacement is there.
func recoverDir(dir string) error {
	work := filepath.Join(dir, WorkDir)
	olds, err := os.ReadDir(filepath.Join(work, "old"))
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	for _, e := range olds {
		rel, err := url.PathUnescape(e.Name())
		old := filepath.Join(work, "old", e.Name())
		if err != nil || !filepath.IsLocal(rel) {
			os.RemoveAll(old)
			continue
		}
		final := filepath.Join(dir, rel)
		if _, err := os.Stat(final); errors.Is(err, os.ErrNotExist) {
			if err := os.Rename(old, final); err != nil {
				return fmt.Errorf("export: put back %s: %w", final, err)
			}
			continue
		}
		os.RemoveAll(old)
	}
	tmps, err := os.ReadDir(filepath.Join(work, "tmp"))
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	for _, e := range tmps {
		os.RemoveAll(filepath.Join(work, "tmp", e.Name()))
	}
	// Exports by earlier versions wrote their temporaries beside the
	// capture directories, where the fleet glob found them.
	legacy, _ := filepath.Glob(filepath.Join(dir, "*", ".export-*"))
	for _, d := range legacy {
		os.RemoveAll(d)
	}
	return nil
}

// finish renames the temporary's .part files to their names, then moves
// the temporary capture directory to final, replacing an earlier export:
// swapped with it in one rename where the kernel can (RENAME_EXCHANGE),
// else moved aside first (recoverDir puts it back after a kill). Readers
// see the earlier export or the new one, whole, at every step.
func finish(tmp, final, dir string) error {
	parts, err := filepath.Glob(filepath.Join(tmp, "*"+partSuffix))
	if err != nil {
		return err
	}
	for _, p := range parts {
		if err := os.Rename(p, strings.TrimSuffix(p, partSuffix)); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	killpoint.At("export:written")
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if _, err := os.Stat(final); errors.Is(err, os.ErrNotExist) {
		if err := os.Rename(tmp, final); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		killpoint.At("export:installed")
		return nil
	}
	if !noExchange {
		if err := exchange(tmp, final); err == nil {
			killpoint.At("export:exchanged")
			os.RemoveAll(tmp) // the earlier export, now here
			return nil
		}
	}
	rel, err := filepath.Rel(dir, final)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	old := filepath.Join(dir, WorkDir, "old", url.PathEscape(rel))
	os.RemoveAll(old)
	if err := os.Rename(final, old); err != nil {
		return fmt.Errorf("export: move aside %s: %w", final, err)
	}
	killpoint.At("export:moved-aside")
	if err := os.Rename(tmp, final); err != nil {
		os.Rename(old, final)
		return fmt.Errorf("export: %w", err)
	}
	killpoint.At("export:installed")
	os.RemoveAll(old)
	return nil
}
